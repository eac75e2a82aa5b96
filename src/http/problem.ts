/**
 * The one error type of the service. Code anywhere throws a `Problem`; the error handler
 * (error-handler.ts) is the only place that turns errors into HTTP responses.
 */

import { PROBLEM_TYPES, type ProblemSlug } from './problem-types.js';
import { nameOrWhy, whyNotShown } from './request-names.js';

/** Field name → messages, as in the problem's `errors` member. */
export type FieldErrors = Record<string, string[]>;

export interface ProblemOptions {
  errors?: FieldErrors;
  headers?: Record<string, string>;
  /** Overrides the slug's usual status (rarely needed). */
  status?: number;
  /** Extra members for the body (e.g. OAuth's `error`), written after the standard ones. */
  extensions?: Record<string, unknown>;
}

/**
 * The longest text a problem repeats that the request did not choose (a resolver's reason), cut there. What the
 * request chose, a name (a member's, a parameter's, a part's, a path) or a value (a code, a host, an id), follows
 * request-names.ts instead: repeated whole or described.
 */
export const MAX_ECHO = 100;

/** `text` cut at `max` characters, with an ellipsis where it was cut. */
function cutAt(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `text` as a problem repeats it: cut at `MAX_ECHO` characters, with an ellipsis where it was cut. */
export function echo(text: string): string {
  return cutAt(text, MAX_ECHO);
}

/**
 * The longest detail a problem carries, far above any honest one (ten field names of `MAX_ECHO`): where a
 * detail repeats something of the request that `echo` did not bound, it is cut here, so that no problem's
 * size grows with the input.
 */
export const MAX_DETAIL = 2_000;

/** `detail` as a problem carries it: cut at `MAX_DETAIL` characters, with an ellipsis where it was cut. */
export function boundedDetail(detail: string): string {
  return cutAt(detail, MAX_DETAIL);
}

export class Problem extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldErrors | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(
    readonly slug: ProblemSlug,
    detail: string,
    options: ProblemOptions = {},
  ) {
    const bounded = boundedDetail(detail);
    super(bounded);
    this.detail = bounded;
    this.name = 'Problem';
    this.status = options.status ?? PROBLEM_TYPES[slug].status;
    this.title = PROBLEM_TYPES[slug].title;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

/**
 * The most fields a validation problem names. Past it the problem counts the others (`errorsOmitted`)
 * instead of naming them, so that its size never grows with the body: no honest request has this many
 * failing fields, and every request with fewer gets each one named.
 */
export const MAX_FIELD_ERRORS = 50;
/** The most fields `detail` names; `errors` has them all (up to MAX_FIELD_ERRORS). */
const DETAIL_FIELDS = 10;
/** `omitted`: failing fields found beyond those in `errors` (counted, not named, by the size check). */
export function validationProblem(errors: FieldErrors, detail?: string, omitted = 0): Problem {
  const all = Object.keys(errors);
  const named: FieldErrors = Object.create(null) as FieldErrors;
  for (const field of all.slice(0, MAX_FIELD_ERRORS)) {
    // Field names from the request are filed by the rule where they are made (validation-errors.ts, the
    // multipart problems); one that reaches here unfiled goes under `request`, described, never repeated.
    const why = whyNotShown(field);
    const name = why === undefined ? field : 'request';
    const list = named[name] ?? [];
    named[name] = list;
    for (const error of errors[field] ?? []) {
      const text = why === undefined ? error : `has a field with a name ${why}, not repeated here: ${error}`;
      if (!list.includes(text)) list.push(text);
    }
  }
  const more = Math.max(0, all.length - MAX_FIELD_ERRORS) + omitted;
  // Counted before filing: two withheld names share the field they are filed under.
  const total = Math.min(all.length, MAX_FIELD_ERRORS) + more;
  const fields = Object.keys(named);
  const listed = fields.slice(0, DETAIL_FIELDS).join(', ');
  const unlisted = total - Math.min(fields.length, DETAIL_FIELDS);
  return new Problem(
    'validation-error',
    detail ??
      (total === 1
        ? `The request has an invalid field: ${listed}.`
        : unlisted === 0
          ? `The request has ${total} invalid fields: ${listed}.`
          : `The request has ${total} invalid fields: ${listed} and ${unlisted} more${more > 0 ? `; errors names the first ${fields.length}` : ', named in errors'}.`),
    { errors: named, extensions: more > 0 ? { errorsOmitted: more } : {} },
  );
}

export function notFound(what: string): Problem {
  return new Problem('not-found', `${what} was not found.`);
}

/** The ids the client API gives, and the list filter that finds a resource by the client's own code. */
const OWN_CODE = {
  Site: { prefix: 'site_', list: 'sites', filter: 'siteCode' },
  'Site visit': { prefix: 'visit_', list: 'site-visits', filter: 'clientTicketNumber' },
} as const;

/**
 * A 404 for a site or visit named in the path by something that is not an id of its kind: the client's own
 * code (`GET /api/v1/sites/S-42`, `svc trigger INC-1001 …`; a visit names its site by siteCode, so a site's
 * code is the natural guess). "Site was not found." sent them looking for a missing site; this says what the
 * ids look like and the filter that finds theirs. An id of the right kind keeps the plain detail.
 */
export function notFoundById(what: keyof typeof OWN_CODE, id: string): Problem {
  const { prefix, list, filter } = OWN_CODE[what];
  if (id.startsWith(prefix)) return notFound(what);
  const shown = whyNotShown(id) === undefined;
  return new Problem(
    'not-found',
    `${what} ${nameOrWhy(id, 'with an id', true)} was not found: ${what.toLowerCase()} ids begin with ${prefix}. ` +
      `To find one by your own ${filter}: GET /api/v1/${list}?${filter}=${shown ? encodeURIComponent(id) : '…'}`,
  );
}

/** The JSON body of a problem, as served (RFC 9457). */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldErrors;
  [extension: string]: unknown;
}

export function problemBody(problem: Problem, problemBaseUrl: string): ProblemBody {
  return {
    type: `${problemBaseUrl}/${problem.slug}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...problem.extensions,
  };
}
