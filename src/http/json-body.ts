/**
 * The JSON body parser: the body's bytes must be UTF-8, then a structural check of the text, then Fastify's
 * own parser, then the refusal of members that could change a prototype.
 *
 * UTF-8 first: RFC 8259 §8.1 requires JSON exchanged between systems to be UTF-8, and a decoder that
 * replaces what is not (Fastify's `parseAs: 'string'`) would store `\xff` and `\xfe` alike as U+FFFD, so two
 * different values would collide. Bytes that are not UTF-8 are not JSON text: 400 `malformed-request`, like
 * unparseable JSON (nothing is decoded yet, so there is no field to name).
 *
 * V8's JSON.parse costs far more than the length of some texts suggests: an object of 27,000 distinct
 * members or arrays nested 150,000 deep (300 KB each) take tens of milliseconds to parse, against about
 * one for a plain megabyte; so do many small values (160,000 `{}` in 480 KB: 8 ms to parse, and 8 MB of
 * objects that sixteen such bodies at once push out of the young generation). No body of this API has an
 * object of more than a few dozen members, is nested more than a few levels, or holds more than a few
 * hundred values, so the text is first walked once (a few milliseconds per megabyte) and a body beyond any
 * of these bounds is refused as invalid without being parsed.
 */
import { isUtf8 } from 'node:buffer';
import type { ErrorObject } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { MAX_FIELD_ERRORS, Problem, validationProblem } from './problem.js';
import { escapePointer } from './request-values.js';
import { OMITTED_KEYWORD } from './size-bounds.js';
import type { Api } from './types.js';
import { validationProblemFromAjv } from './validation-errors.js';

/** Deeper than any body of this API nests (a few levels), far below what would exhaust the stack. */
export const MAX_JSON_DEPTH = 64;
/** Far more members than any object of this API declares, and than any of its maps may hold. */
export const MAX_JSON_MEMBERS = 1_000;
/**
 * Far more values (objects, lists, strings, numbers, booleans, nulls) than any body of this API holds: a
 * visit's, the largest, some 230 (200 siteAssetIds). Each costs the parser an allocation, whatever its size.
 */
export const MAX_JSON_VALUES = 20_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

// Commas seen at each open level (an object of n members, or a list of n items, has n - 1), and whether the
// level is an object. One pair for every call (a call runs to its end; a level is reset when it opens):
// typed arrays made at each call cost more than the walk of a typical body.
const commas = new Int32Array(MAX_JSON_DEPTH + 1);
const objects = new Uint8Array(MAX_JSON_DEPTH + 1);

const TOO_MANY_VALUES = `has more than ${MAX_JSON_VALUES} values`;

/**
 * Why the text cannot be parsed at a bounded cost, or undefined. It looks only at brackets, commas and the
 * extent of strings, so a malformed text passes and is refused by the parser. Values are counted by their
 * opening brackets and commas: a list of n numbers counts n, an object of n members n, an empty list 1.
 */
export function structureRefusal(text: string): string | undefined {
  let depth = 0;
  let values = 0;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = stringEnd(text, index);
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
      if (++values > MAX_JSON_VALUES) return TOO_MANY_VALUES;
      commas[depth] = 0;
      objects[depth] = code === OPEN_BRACE ? 1 : 0;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth > 0) depth--;
    } else if (code === COMMA) {
      if (++values > MAX_JSON_VALUES) return TOO_MANY_VALUES;
      if (objects[depth] !== 1) continue;
      const seen = commas[depth]! + 1;
      if (seen >= MAX_JSON_MEMBERS) return `has an object of more than ${MAX_JSON_MEMBERS} members`;
      commas[depth] = seen;
    }
  }
  return undefined;
}

/**
 * Where the string opened at `open` ends: the index of its closing quote, or past the text. Found by
 * `indexOf` (a string is most of a body, and a native search is several times a loop's speed); a quote
 * preceded by an odd run of backslashes is escaped, and the search goes on after it.
 */
export function stringEnd(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return text.length;
}

/** The detail of a body that is not UTF-8: fixed, so that it never echoes the body or grows with it. */
export const NOT_UTF8_DETAIL =
  'The request body is not UTF-8: JSON text must be encoded as UTF-8 (RFC 8259 §8.1), without bytes of another encoding.';

export const PROTO_MESSAGE = 'is refused: no object may have a member named __proto__';
export const CONSTRUCTOR_MESSAGE =
  'is refused: no object may have a member named constructor that holds a member named prototype';

// The texts in which a parsed value may hold such a member: a member name spelling `__proto__` or `constructor`,
// each character as itself or as a \u escape. secure-json-parse (what Fastify's parser uses) tests the same two
// expressions before walking the value; without a match the value needs no walk, which keeps a body that has no
// such member at the cost it had (one native scan of the text for each).
const SUSPECT_PROTO =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
const SUSPECT_CONSTRUCTOR =
  /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;

/** Why a member named `name` holding `value` is refused, or undefined: secure-json-parse's tests in its 'error' mode. */
function prototypeMember(name: string, value: unknown): string | undefined {
  if (name === '__proto__') return PROTO_MESSAGE;
  if (name !== 'constructor' || value === null || typeof value !== 'object') return undefined;
  return Object.hasOwn(value, 'prototype') ? CONSTRUCTOR_MESSAGE : undefined;
}

/**
 * An error (Ajv's shape, so that the member is named as any other field) for each refused member of the value,
 * at any depth: the first MAX_FIELD_ERRORS, then a count of the others. `path` is the way to `value`. A refused
 * member is not looked into. The depth is bounded by the structural check (MAX_JSON_DEPTH).
 */
function prototypeErrors(value: object, path: string[], errors: ErrorObject[], omitted: { count: number }): void {
  const names = Array.isArray(value) ? undefined : Object.keys(value);
  const length = names ? names.length : (value as unknown[]).length;
  for (let index = 0; index < length; index++) {
    const child = names ? (value as Record<string, unknown>)[names[index]!] : (value as unknown[])[index];
    const message = names ? prototypeMember(names[index]!, child) : undefined;
    if (message === undefined && (child === null || typeof child !== 'object')) continue;
    path.push(names ? names[index]! : String(index));
    if (message === undefined) prototypeErrors(child as object, path, errors, omitted);
    else if (errors.length < MAX_FIELD_ERRORS) {
      const instancePath = `/${path.map(escapePointer).join('/')}`;
      errors.push({ keyword: 'prototype', instancePath, schemaPath: '#', params: {}, message });
    } else omitted.count++;
    path.pop();
  }
}

/**
 * The problem for a parsed body holding such members, or undefined. A 422 naming each (bounded as every
 * validation problem is); on the token endpoint, whose errors are OAuth's, a 400 `invalid_request` whose
 * detail names them.
 */
function prototypeRefusal(request: FastifyRequest, value: unknown): Problem | undefined {
  const errors: ErrorObject[] = [];
  const omitted = { count: 0 };
  if (value !== null && typeof value === 'object') prototypeErrors(value, [], errors, omitted);
  if (errors.length === 0) return undefined;
  if (omitted.count > 0) errors.push({ keyword: OMITTED_KEYWORD, instancePath: '', schemaPath: '#', params: omitted });
  const problem = validationProblemFromAjv(errors);
  if (!request.routeOptions.config?.oauthErrors) return problem;
  return new Problem(
    'malformed-request',
    `${problem.detail} A member named __proto__, or constructor holding a member named prototype, is refused.`,
  );
}

/** Replaces Fastify's JSON parser with the same parser between the checks above. */
export function registerJsonBodyParser(app: Api): void {
  // Prototype members are looked for below (prototypeRefusal), to be named in a 422: Fastify's own check
  // answers them as unparseable JSON (400).
  const parse = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // parseAs 'buffer': the body's bytes, read whole within the route's limit (413 beyond it), as before.
    const bytes = body as Buffer;
    // A route that takes no body (a DELETE, say) asked with Content-Type: application/json and nothing after it:
    // many clients send that header on every request. Nothing to parse, so nothing to refuse; a route that
    // takes a body still refuses an empty one (400, error-handler.ts).
    if (bytes.length === 0 && request.routeOptions.schema?.body === undefined) return done(null, undefined);
    // Checked before decoding (a native scan, 15 to 75 µs a megabyte): decoding would replace what is not UTF-8.
    if (!isUtf8(bytes)) return done(new Problem('malformed-request', NOT_UTF8_DETAIL), undefined);
    // A leading byte order mark stays in the text, as before: Fastify's parser skips it.
    const text = bytes.toString('utf8');
    const refusal = structureRefusal(text);
    if (refusal) return done(validationProblem({ body: [refusal] }), undefined);
    parse(request, text, (error, value) => {
      if (error) return done(error, undefined);
      const suspect = SUSPECT_PROTO.test(text) || SUSPECT_CONSTRUCTOR.test(text);
      const refused = suspect ? prototypeRefusal(request, value) : undefined;
      done(refused ?? null, refused ? undefined : value);
    });
  });
}
