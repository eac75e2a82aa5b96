/**
 * Request validation. Bodies are validated strictly (no coercion, no stripping of unknown members,
 * every error reported, unless a list or map is over its size bound: then that alone, see size-bounds.ts);
 * path, query and headers are coerced from their string form. Ajv errors are turned into the `errors` map
 * of a 422 validation-error problem, keyed by the field's name.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { type FieldErrors, type Problem, validationProblem } from './problem.js';
import { compileSizeCheck, OMITTED_KEYWORD } from './size-bounds.js';
import {
  boundedDateTimeFormat,
  DATE_TIME_MESSAGE,
  integerParameters,
  integerSpellingErrors,
  unstorableTextError,
} from './request-values.js';
import { lazyValidator } from './lazy-compilers.js';

/** Fields that responses carry but no request may write; naming them in a body says so plainly. */
const READ_ONLY_FIELDS = new Set([
  'id',
  'clientId',
  // Writable on messages, whose schema declares it; read-only everywhere else.
  'status',
  'createdAt',
  'updatedAt',
  'svcPm',
  'recordOwner',
  'method',
  'occurredAt',
  'assetsToService',
  'siteVisitAssets',
  'returnLabel',
  'fileAttachment',
  'tenantId',
]);

/**
 * Names body members that a create accepts and a patch may not change (`'x-immutable': ['siteVisitId']`
 * on the patch body, beside `additionalProperties: false`), so that sending one says so plainly rather
 * than calling it unknown. The keyword also shows in the OpenAPI document.
 */
export const IMMUTABLE_KEYWORD = 'x-immutable';

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, verbose: true, removeAdditional: false, ...options });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  // Every date-time of every request, body or query, within the range both databases hold.
  ajv.addFormat('date-time', boundedDateTimeFormat);
  return ajv;
}

// `discriminator` (OpenAPI's keyword) picks the one oneOf branch named by a tag member, so a body that is
// one of several shapes (the operator's workflow actions) is validated, and reported, as that shape only.
const bodyAjv = createAjv({ coerceTypes: false, useDefaults: false, discriminator: true });
const parameterAjv = createAjv({ coerceTypes: true, useDefaults: true });

const acceptStreamedBody = () => true;

/**
 * The schema's validation and the checks of request-values.ts: no string the database cannot hold as sent
 * (U+0000, lone surrogates; the first one found is named, even beside other failures) and, for path, query
 * and headers, integers in plain digits only. Their errors name the field like any other validation error.
 */
/**
 * `unstorableTextError`, or for a value nested deeper than the stack allows (a hostile body of 250,000 nested
 * arrays) a validation error instead of a 500.
 */
function textErrorOrTooDeep(data: unknown): ErrorObject | undefined {
  try {
    return unstorableTextError(data);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return { keyword: 'depth', instancePath: '', schemaPath: '#', params: {}, message: 'is nested too deeply' };
  }
}

function guarded(validate: ValidateFunction, integerNames: readonly string[] = []): ValidateFunction {
  const check = ((data: unknown) => {
    // Coercion replaces the raw text of a parameter with its number, so the spelling is read first; a
    // misspelt integer is reported for its spelling alone, not also for the number coercion made of it.
    const spelling = integerSpellingErrors(data, integerNames);
    const valid = validate(data);
    const text = textErrorOrTooDeep(data);
    // Nearly every request: nothing to merge.
    if (valid && spelling.length === 0) {
      check.errors = text ? [text] : null;
      return text === undefined;
    }
    const misspelt = new Set(spelling.map((error) => error.instancePath));
    const errors = [...(validate.errors ?? []).filter((error) => !misspelt.has(error.instancePath)), ...spelling];
    if (text && !errors.some((error) => error.instancePath === text.instancePath)) errors.push(text);
    check.errors = errors.length > 0 ? errors : null;
    return errors.length === 0;
  }) as ValidateFunction;
  return check;
}

/**
 * The size check first (size-bounds.ts): a body with a list or map over its bound is refused with those
 * errors alone, so that Ajv never walks its items one by one.
 */
function sizeCheckedFirst(schema: object, validate: ValidateFunction): ValidateFunction {
  const sizeErrors = compileSizeCheck(schema);
  const guarded = ((data: unknown) => {
    const errors = sizeErrors(data);
    if (errors) {
      guarded.errors = errors;
      return false;
    }
    const valid = validate(data);
    guarded.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return guarded;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart, contentType }) => {
  // A multipart body (media.ts MultipartBody) is read from the stream by its handler, which checks the
  // parts; its schema documents the contract.
  if (httpPart === 'body' && contentType?.startsWith('multipart/')) return acceptStreamedBody;
  if (httpPart === 'body') return lazyValidator(() => compileBodyValidator(schema as object));
  return lazyValidator(() =>
    guarded(parameterAjv.compile(schema as object) as ValidateFunction, integerParameters(schema)),
  );
};

/** Compiles a schema with the strict body rules, for validating data outside of a route (uploads, workflow). */
export function compileBodyValidator(schema: object): ValidateFunction {
  return sizeCheckedFirst(schema, guarded(bodyAjv.compile(schema)));
}

function fieldName(instancePath: string, child?: string, rootName = 'body'): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  if (segments.length === 0) return rootName;
  return segments.reduce(
    (name, segment) => (/^\d+$/.test(segment) && name ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment),
    '',
  );
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function describeTypes(schema: unknown): string {
  const branches = (schema as { anyOf?: unknown[] })?.anyOf ?? [schema];
  const names = branches.flatMap((branch) => {
    const b = branch as { type?: string | string[]; const?: unknown; enum?: unknown[] };
    if (b.const !== undefined) return [JSON.stringify(b.const)];
    if (b.enum) return b.enum.map((value) => JSON.stringify(value));
    const types = Array.isArray(b.type) ? b.type : b.type ? [b.type] : [];
    return types.map((type) => TYPE_NAMES[type] ?? type);
  });
  return [...new Set(names)].join(' or ') || 'a valid value';
}

/** The tag values a discriminated union accepts, from its oneOf branches' `const`s. */
function discriminatorValues(schema: unknown, tag: string): string[] {
  const branches =
    (schema as { oneOf?: { properties?: Record<string, { const?: unknown }> }[] } | undefined)?.oneOf ?? [];
  return branches
    .map((branch) => branch.properties?.[tag]?.const)
    .filter((value): value is string => typeof value === 'string');
}

function message(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return error.data === null
        ? `must be ${describeTypes(error.parentSchema)}, not null`
        : `must be ${describeTypes(error.parentSchema)}`;
    case 'enum': {
      const allowed = params.allowedValues as unknown[];
      const values = allowed.filter((value) => value !== null).map((value) => String(value));
      return `must be one of: ${values.join('; ')}${allowed.includes(null) ? ' (or null)' : ''}`;
    }
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'anyOf':
      return `must be ${describeTypes(error.parentSchema)}`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters`;
    case 'maxLength':
      return `must be at most ${params.limit} characters`;
    case 'minimum':
      return `must be at least ${params.limit}`;
    case 'maximum':
      return `must be at most ${params.limit}`;
    case 'minItems':
      return params.limit === 1 ? 'must not be empty' : `must have at least ${params.limit} entries`;
    case 'maxItems':
      return `must have at most ${params.limit} entries`;
    case 'maxProperties':
      return `must have at most ${params.limit} members`;
    case 'uniqueItems':
      return 'must not contain duplicates';
    case 'format':
      return params.format === 'date-time'
        ? DATE_TIME_MESSAGE
        : params.format === 'date'
          ? 'must be a date such as 2026-11-22'
          : `must be a valid ${params.format}`;
    case 'pattern': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return description ? `must match the expected format (${description})` : 'must match the expected format';
    }
    default:
      return error.message ?? 'is invalid';
  }
}

/** Turns Ajv's errors into `field → messages`, one readable message per failure. */
export function fieldErrorsFromAjv(errors: readonly ErrorObject[], rootName = 'body'): FieldErrors {
  // For a union (anyOf) report the union once, not each branch's complaint.
  const unions = errors.filter((error) => error.keyword === 'anyOf');
  // A value of the wrong type (null for an enum) is reported by its type alone, not also as "one of".
  const mistyped = new Set(errors.filter((error) => error.keyword === 'type').map((error) => error.instancePath));
  const relevant = errors.filter(
    (error) =>
      (error.keyword === 'anyOf' ||
        !unions.some(
          (union) => error.instancePath === union.instancePath && error.schemaPath.startsWith(`${union.schemaPath}/`),
        )) &&
      !(error.keyword === 'enum' && mistyped.has(error.instancePath)),
  );
  // Field names come from the request (unknown query parameters and members): a plain object would hand
  // back Object.prototype's `valueOf` or `__proto__` for them, so the map has no prototype.
  const result: FieldErrors = Object.create(null) as FieldErrors;
  const add = (name: string, text: string) => {
    // Headers are named as documented (`If-Match`, `Idempotency-Key`), not as Node lower-cases them.
    const field =
      rootName === 'headers'
        ? name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase())
        : name;
    const list = result[field] ?? [];
    result[field] = list;
    if (!list.includes(text)) list.push(text);
  };
  for (const error of relevant) {
    const params = error.params as Record<string, unknown>;
    if (error.keyword === OMITTED_KEYWORD) continue;
    if (error.keyword === 'required') {
      add(fieldName(error.instancePath, String(params.missingProperty), rootName), 'is required');
    } else if (error.keyword === 'discriminator') {
      // The tag member is missing, not a string, or names no branch.
      const tag = String(params.tag);
      add(
        fieldName(error.instancePath, tag, rootName),
        params.tagValue === undefined
          ? 'is required'
          : `must be one of: ${discriminatorValues(error.parentSchema, tag).join('; ')}`,
      );
    } else if (error.keyword === 'additionalProperties') {
      const name = String(params.additionalProperty);
      const immutable = (error.parentSchema as Record<string, unknown> | undefined)?.[IMMUTABLE_KEYWORD];
      const topLevel = error.instancePath === '' && rootName === 'body';
      add(
        fieldName(error.instancePath, name, rootName),
        Array.isArray(immutable) && immutable.includes(name)
          ? 'is set on create and cannot be changed'
          : READ_ONLY_FIELDS.has(name) && topLevel
            ? 'is read-only and cannot be written'
            : 'is not a known field',
      );
    } else {
      add(fieldName(error.instancePath, undefined, rootName), message(error));
    }
  }
  return result;
}

/**
 * The 422 problem for Ajv's errors (and the size check's): the fields named, and the count of those a
 * flood of unknown members left unnamed (size-bounds.ts), so that the problem says how many more failed.
 */
export function validationProblemFromAjv(errors: readonly ErrorObject[], rootName = 'body'): Problem {
  const omitted = errors.reduce(
    (count, error) => count + (error.keyword === OMITTED_KEYWORD ? Number(error.params.count) : 0),
    0,
  );
  return validationProblem(fieldErrorsFromAjv(errors, rootName), undefined, omitted);
}
