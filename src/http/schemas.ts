/** Schema pieces shared by every route: problem responses, nullable types, bounded strings, path ids. */
import { type TNull, type TProperties, type TSchema, type TUnion, type TUnsafe, Type } from 'typebox';
import { MAX_FIELD_ERRORS } from './problem.js';
import { MAX_NAME } from './request-names.js';
import { type ProblemSlug, problemTypesOf } from './problem-types.js';
import { DATE_TIME_MAX, DATE_TIME_MIN } from './request-values.js';

/**
 * `type: [T, "null"]`: a value of T or null, written as OpenAPI 3.1 (JSON Schema 2020-12) writes it
 * rather than as an anyOf. Typed as TypeBox's union so that handlers see `T | null`.
 */
export function Nullable<T extends TSchema>(schema: T): TUnion<[T, TNull]> {
  const { type, enum: values } = schema as { type?: string; enum?: unknown[] };
  if (typeof type !== 'string') throw new Error('Nullable takes a schema with one primitive type');
  // An enum (StringEnum) must list null too, or null would still fail it.
  return { ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) } as unknown as TUnion<
    [T, TNull]
  >;
}

/**
 * The query of a route that takes no parameters: declared (not left out) so that an unknown parameter is a
 * 422 naming it, as on every list (product decisions), rather than silently ignored.
 */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** A required, non-empty string of at most `max` characters. */
export function Text(max: number, options: { description?: string; examples?: unknown[]; pattern?: string } = {}) {
  return Type.String({ minLength: 1, maxLength: max, ...options });
}

/**
 * A string from a fixed list, written as a JSON Schema `enum` (one readable error listing the values,
 * and an `enum` in the OpenAPI document) and typed as the union of the values.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
): StringEnumSchema<T> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options }) as StringEnumSchema<T>;
}

/**
 * The `enum` tuple is for Fastify's type provider, which infers handler types with TypeBox 1.x from the
 * JSON Schema structure (TypeBox 0.34, used here, reads `static`).
 */
export type StringEnumSchema<T extends readonly string[]> = TUnsafe<T[number]> & { type: 'string'; enum: [...T] };

export const DateTime = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/**
 * A date-time a request sends. Every `date-time` of a request is checked against the range both databases
 * hold (request-values.ts registers the format once); this says so in the OpenAPI document.
 */
export const DateTimeInput = (description: string) =>
  Type.String({
    format: 'date-time',
    description: `${description} From ${DATE_TIME_MIN} through ${DATE_TIME_MAX}, compared in UTC.`,
  });

/** A calendar date without a time zone, YYYY-MM-DD; the format rejects dates that do not exist (2026-02-30). */
export const CalendarDate = (description: string) =>
  Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description, examples: ['2026-11-24'] });

/** A time of day, HH:MM on the 24-hour clock, 00:00 to 23:59. */
// maxLength with the pattern: a string the schema does not bound by length gives its route the service's 1 MiB
// body limit (body-limit.ts), not a limit from its schema.
export const TimeOfDay = (description: string) =>
  Type.String({ maxLength: 5, pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description, examples: ['09:30'] });

export const IdParams = Type.Object(
  { id: Type.String({ maxLength: 100, description: 'The resource id.' }) },
  { additionalProperties: false },
);

/** Present when more fields failed than `errors` names (a body over a size bound, a flood of unknown members). */
const ErrorsOmitted = () =>
  Type.Integer({
    minimum: 1,
    description: `How many more fields failed than errors names (it names at most ${MAX_FIELD_ERRORS}); absent when it names them all.`,
  });

/** The component names of the problem shapes (typebox 1 keeps `$id` out of a schema's static type). */
export const PROBLEM_ID = 'Problem';
export const VALIDATION_PROBLEM_ID = 'ValidationProblem';

export const ProblemSchema = Type.Object(
  {
    type: Type.String({
      format: 'uri',
      description: 'Identifies the problem: {PROBLEM_BASE_URL}/<slug>; the address explains it.',
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    errors: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), {
        description: `On validation failures: each failing field (or query parameter or header) with its messages; at most ${MAX_FIELD_ERRORS}.`,
      }),
    ),
    errorsOmitted: Type.Optional(ErrorsOmitted()),
    existing: Type.Optional(
      Type.Object(
        {
          type: Type.String({
            description: 'As the resource shows it in data.type: sites, site-visits, projects, items.',
          }),
          id: Type.String({ maxLength: 100, description: 'As the resource shows it in data.id (site_…, visit_…).' }),
        },
        {
          additionalProperties: false,
          description:
            'On duplicate-resource (409): the resource of your client that holds the unique value already (the site with that siteCode, the visit with that clientTicketNumber). Absent when it could not be read at that moment (a create racing yours had not committed yet).',
          examples: [{ type: 'sites', id: 'site_5k2x8m4q7b1c9d3f6g0h2j4n6p' }],
        },
      ),
    ),
  },
  { $id: PROBLEM_ID, title: 'Problem details (RFC 9457)', additionalProperties: true },
);

/**
 * A named 422 form of a problem: the standard members, with `type` ending in the slug, then the members its
 * type adds (the failing fields, a limit and what met it). Registered by the routes that answer it and named
 * beside `Problem` in their 422 responses (problemResponses' `forms`).
 */
export function UnprocessableForm<T extends TProperties>(
  slug: ProblemSlug,
  members: T,
  options: { $id: string; title: string; description?: string },
) {
  return Type.Object(
    {
      type: Type.String({ format: 'uri', description: `Ends in /${slug}.` }),
      title: Type.String(),
      status: Type.Literal(422),
      detail: Type.String(),
      ...members,
    },
    { ...options, additionalProperties: true },
  );
}

/**
 * The validation form of a problem (422 validation-error): `errors` names every failing field. Named in
 * the OpenAPI document for 422 responses; routes keep declaring `Problem` (problemResponses), so that
 * serialising a 422 never depends on this stricter shape.
 */
export const ValidationProblemSchema = UnprocessableForm(
  'validation-error',
  {
    errors: Type.Record(Type.String(), Type.Array(Type.String(), { minItems: 1 }), {
      description: `Each failing field with its messages, at most ${MAX_FIELD_ERRORS} (errorsOmitted counts the others). Body members by name (nested ones dotted, array entries as name[0]); query parameters and headers as sent, e.g. page[size], Idempotency-Key; a body that is not a JSON object as body. A name the request chose (an unknown member's or parameter's) is repeated only when it is printable and at most ${MAX_NAME} characters: otherwise its failure is filed under the field holding it (body or querystring at the top), its message giving the name's first control or invisible character and its position (U+202E at character 2) or its length.`,
      examples: [
        {
          siteCode: ['is required'],
          clientId: ['is read-only and cannot be written'],
          'page[size]': ['must be at most 100'],
        },
      ],
    }),
    errorsOmitted: Type.Optional(ErrorsOmitted()),
  },
  { $id: VALIDATION_PROBLEM_ID, title: 'Validation problem (422)' },
);

export const OAuthProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    error: Type.String({
      description: 'OAuth 2.0 error code (RFC 6749 §5.2).',
      enum: [
        'invalid_request',
        'invalid_client',
        'unsupported_grant_type',
        'invalid_scope',
        'temporarily_unavailable',
        'server_error',
      ],
    }),
    error_description: Type.String(),
  },
  { title: 'Token endpoint error (problem members and OAuth members)', additionalProperties: true },
);

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request (unparseable body).',
  401: 'Missing, invalid or expired bearer token.',
  403: 'The token lacks the required scope.',
  404: 'Not found, or not owned by your client.',
  405: 'Method not allowed on this path.',
  408: 'The request did not arrive completely in time (a slow upload, a stalled connection): nothing was done, and the connection is closed.',
  409: 'Conflict.',
  413: `Uploaded file larger than 10 MiB.`,
  415: 'Unsupported media type.',
  422: 'Validation failed; `errors` names each failing field.',
  429: 'Rate limit exceeded; wait Retry-After seconds.',
  431: 'The request headers are larger than 16 KiB in total: nothing was done, and the connection is closed.',
  500: 'Unexpected failure; does not prove that a write failed.',
  503: 'Temporarily unavailable; retry with backoff.',
};

export type ProblemStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 415 | 422 | 429 | 431 | 500 | 503;

/**
 * The problem types a status carries wherever it is answered, for the statuses that have several types:
 * the others a route names itself (problemResponses' `types`), as only it knows which it can raise.
 */
const TYPES_OF_EVERY_ROUTE: Partial<Record<ProblemStatus, readonly ProblemSlug[]>> = { 422: ['validation-error'] };

/** The problem types of `status` on a route that names `named` for it, as the document lists them. */
function problemTypesFor(status: ProblemStatus, named: readonly ProblemSlug[] | undefined): readonly ProblemSlug[] {
  // Sandbox-only types are listed only where a route names them.
  const ofStatus = problemTypesOf('production')
    .filter(([, problem]) => problem.status === status)
    .map(([slug]) => slug);
  if (ofStatus.length <= 1) return [...new Set([...ofStatus, ...(named ?? [])])];
  const listed = [...new Set([...(TYPES_OF_EVERY_ROUTE[status] ?? []), ...(named ?? [])])];
  if (listed.length === 0)
    throw new Error(`a route answering ${status} names its problem types (one of ${ofStatus.join(', ')})`);
  return listed;
}

/**
 * Response schemas for the problem statuses a route can answer, with SPEC's meaning of each and the problem
 * types it can carry there ("Problem types: …", which the tests' contract check holds every answer to).
 * `types` names, per status, the types this route raises beside those every route can (TYPES_OF_EVERY_ROUTE):
 * a status with several types lists only these. `forms` names the shared schemas ($id) of problems with
 * members of their own that a status of this route can also be (a choice beside the generic problem; the
 * OpenAPI document shows each form).
 */
export function problemResponses(
  statuses: ProblemStatus[],
  descriptions: Partial<Record<ProblemStatus, string>> = {},
  forms: Partial<Record<ProblemStatus, string[]>> = {},
  types: Partial<Record<ProblemStatus, readonly ProblemSlug[]>> = {},
) {
  const responses: Record<number, TSchema> = {};
  for (const status of statuses) {
    const slugs = problemTypesFor(status, types[status]);
    const description = `${descriptions[status] ?? STATUS_DESCRIPTIONS[status]} Problem types: ${slugs.join(', ')}.`;
    const others = forms[status] ?? [];
    responses[status] =
      others.length === 0
        ? Type.Ref(PROBLEM_ID, { description })
        : Type.Union([Type.Ref(PROBLEM_ID), ...others.map((id) => Type.Ref(id))], { description });
  }
  return responses;
}

/** `{data: T}`: the operator API wraps every payload like the client API does. */
export function DataOf<T extends TSchema>(schema: T) {
  return Type.Object({ data: schema }, { additionalProperties: false });
}
