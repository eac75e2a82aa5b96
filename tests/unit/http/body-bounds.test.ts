/** What a route's body limit is derived from (body-limit.ts) and the structural check before parsing (json-body.ts). */
import { describe, expect, it } from 'vitest';
import { jsonBodyLimit, longestBody } from '../../../src/http/body-limit.js';
import {
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
  MAX_JSON_VALUES,
  stringEnd,
  structureRefusal,
} from '../../../src/http/json-body.js';
import { seededRandom } from '../../helpers/seeded-random.js';

const closed = (properties: Record<string, unknown>) => ({ type: 'object', properties, additionalProperties: false });

describe('longestBody: the longest minified JSON a schema admits, every character escaped', () => {
  it('a string: quotes and twelve bytes per code point (a surrogate pair, escaped)', () => {
    expect(longestBody({ type: 'string', maxLength: 10 })).toBe(122);
    expect(longestBody({ type: 'string', format: 'uuid' })).toBe(2 + 12 * 36);
    expect(longestBody({ type: 'string' })).toBe(Number.POSITIVE_INFINITY);
  });

  it('a list, an object, unions and nullable types', () => {
    expect(longestBody({ type: 'array', maxItems: 3, items: { type: 'boolean' } })).toBe(2 + 3 * 6);
    expect(longestBody({ type: 'array', items: { type: 'boolean' } })).toBe(Number.POSITIVE_INFINITY);
    expect(longestBody(closed({ a: { type: 'null' } }))).toBe(2 + 8 + 1 + 4 + 1);
    expect(longestBody({ type: 'object', properties: { a: { type: 'null' } } })).toBe(Number.POSITIVE_INFINITY);
    expect(longestBody({ anyOf: [{ type: 'null' }, { type: 'boolean' }] })).toBe(5);
    expect(longestBody({ type: ['integer', 'null'] })).toBe(32);
    expect(longestBody({ enum: ['ab', 'c'] })).toBe(14);
  });
});

describe('jsonBodyLimit', () => {
  it('twice the longest body, at least 16 KiB, at most the service limit', () => {
    expect(jsonBodyLimit(closed({ a: { type: 'boolean' } }), 1_000_000)).toBe(16 * 1024);
    expect(jsonBodyLimit({ type: 'string', maxLength: 10_000 }, 1_000_000)).toBe(2 * (2 + 120_000));
    expect(jsonBodyLimit({ type: 'string' }, 1_000_000)).toBe(1_000_000);
  });

  it('none for a multipart body, which reads its own limits', () => {
    expect(jsonBodyLimit({ content: { 'multipart/form-data': { schema: {} } } }, 1_000_000)).toBeUndefined();
    expect(jsonBodyLimit(undefined, 1_000_000)).toBeUndefined();
  });
});

describe('structureRefusal', () => {
  const members = (count: number) => `{${Array.from({ length: count }, (_, i) => `"m${i}":[1,2]`).join(',')}}`;

  it(`an object of up to ${MAX_JSON_MEMBERS} members passes; one more is refused`, () => {
    expect(structureRefusal(members(MAX_JSON_MEMBERS))).toBeUndefined();
    expect(structureRefusal(members(MAX_JSON_MEMBERS + 1))).toMatch(/more than 1000 members/);
    // A list's items are bounded by the schema's maxItems check after parsing, within the values' bound.
    expect(structureRefusal(`[${Array(5_000).fill(0).join(',')}]`)).toBeUndefined();
  });

  it(`up to ${MAX_JSON_VALUES} values pass, in lists of any depth; more are refused`, () => {
    const list = (count: number, item: string) => `[${Array(count).fill(item).join(',')}]`;
    expect(structureRefusal(list(MAX_JSON_VALUES, '0'))).toBeUndefined();
    expect(structureRefusal(list(MAX_JSON_VALUES + 1, '0'))).toBe(`has more than ${MAX_JSON_VALUES} values`);
    // Empty objects and lists, each under its member and depth bounds: 160 lists of 1,000 `{}`.
    expect(structureRefusal(list(160, list(999, '{}')))).toBe(`has more than ${MAX_JSON_VALUES} values`);
    expect(structureRefusal(`{"a":${list(MAX_JSON_VALUES / 2 - 1, '[]')}}`)).toBeUndefined();
    // Commas in strings are text.
    expect(structureRefusal(JSON.stringify([`${','.repeat(MAX_JSON_VALUES * 2)}`]))).toBeUndefined();
  });

  it(`nesting up to ${MAX_JSON_DEPTH} passes; deeper is refused`, () => {
    expect(structureRefusal(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBeUndefined();
    expect(structureRefusal(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`)).toMatch(
      /nested more than 64/,
    );
  });

  it('brackets and commas inside strings, escaped quotes included, are not structure', () => {
    expect(structureRefusal(JSON.stringify({ a: `\\"${'[{,'.repeat(5_000)}` }))).toBeUndefined();
  });

  it('a malformed text is left to the parser', () => {
    expect(structureRefusal('{"a": ]]]]')).toBeUndefined();
    expect(structureRefusal('"unterminated')).toBeUndefined();
  });

  it('ends a string where a walk of its characters does: after any run of backslashes', () => {
    const walked = (text: string, open: number) => {
      let index = open + 1;
      for (; index < text.length; index++) {
        if (text[index] === '\\') index++;
        else if (text[index] === '"') break;
      }
      return Math.min(index, text.length);
    };
    const random = seededRandom(3);
    const alphabet = ['"', '\\', 'a', ','];
    for (let round = 0; round < 50_000; round++) {
      const text = `"${Array.from({ length: Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * 4)]).join('')}`;
      expect([text, stringEnd(text, 0)]).toEqual([text, walked(text, 0)]);
    }
  });
});
