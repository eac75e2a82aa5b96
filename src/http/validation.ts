/**
 * Request validation. Bodies are validated strictly (no coercion, no stripping of unknown members,
 * every error reported, unless a list or map is over its size bound: then that alone, see size-bounds.ts);
 * path, query and headers are coerced from their string form. What the validators find becomes the `errors`
 * map of a 422 validation-error problem in validation-errors.ts.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { compileSizeCheck } from './size-bounds.js';
import {
  boundedDateTimeFormat,
  integerParameters,
  integerSpellingErrors,
  unstorableTextError,
} from './request-values.js';
import { lazyValidator } from './lazy-compilers.js';

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
