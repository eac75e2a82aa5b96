/**
 * The JSON body parser: Fastify's own (prototype poisoning refused), after a structural check of the text.
 * V8's JSON.parse costs far more than the length of some texts suggests: an object of 27,000 distinct
 * members or arrays nested 150,000 deep (300 KB each) take tens of milliseconds to parse, against about
 * one for a plain megabyte. No body of this API has an object of more than a few dozen members or is
 * nested more than a few levels, so the text is first walked once (a few milliseconds per megabyte) and a
 * body beyond either bound is refused as invalid without being parsed.
 */
import { validationProblem } from './problem.js';
import type { Api } from './types.js';

/** Deeper than any body of this API nests (a few levels), far below what would exhaust the stack. */
export const MAX_JSON_DEPTH = 64;
/** Far more members than any object of this API declares, and than any of its maps may hold. */
export const MAX_JSON_MEMBERS = 1_000;

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

/**
 * Why the text cannot be parsed at a bounded cost, or undefined. It looks only at brackets, commas and the
 * extent of strings, so a malformed text passes and is refused by the parser.
 */
export function structureRefusal(text: string): string | undefined {
  let depth = 0;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = stringEnd(text, index);
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
      commas[depth] = 0;
      objects[depth] = code === OPEN_BRACE ? 1 : 0;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth > 0) depth--;
    } else if (code === COMMA && objects[depth] === 1) {
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

/** Replaces Fastify's JSON parser with the same parser behind the structural check. */
export function registerJsonBodyParser(app: Api): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // parseAs 'string': the body is a string.
    const refusal = structureRefusal(body as string);
    if (refusal) return done(validationProblem({ body: [refusal] }), undefined);
    parse(request, body as string, done);
  });
}
