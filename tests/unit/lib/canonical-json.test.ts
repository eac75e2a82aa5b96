/**
 * The canonical JSON the Idempotency-Key check hashes (src/lib/canonical-json.ts): one text for one payload,
 * however its members were ordered or spelled, and a different text for any different payload.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/lib/canonical-json.js';
import { seededRandom } from '../../helpers/seeded-random.js';

describe('canonical JSON', () => {
  it('sorts object members at every depth, and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('gives one text for payloads that differ only in member order', () => {
    const one = { siteCode: 'S-1', name: 'Main', address: { city: 'Berlin', street: 'A 1' } };
    const other = { address: { street: 'A 1', city: 'Berlin' }, name: 'Main', siteCode: 'S-1' };
    expect(canonicalJson(one)).toBe(canonicalJson(other));
  });

  it('leaves out undefined members, as JSON does, but keeps null', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    expect(canonicalJson({ a: 1, b: null })).toBe('{"a":1,"b":null}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('sorts by code unit, not by locale, and escapes as JSON does', () => {
    expect(canonicalJson({ é: 1, z: 2, Z: 3, '': 4 })).toBe('{"":4,"Z":3,"z":2,"é":1}');
    expect(canonicalJson({ 'a"b': 'line\nbreak' })).toBe('{"a\\"b":"line\\nbreak"}');
  });

  it('tells apart values JSON tells apart', () => {
    const texts = [1, '1', true, 'true', null, 'null', [], {}, [null], { a: [] }].map(canonicalJson);
    expect(new Set(texts).size).toBe(texts.length);
  });
});

/** The first release's canonical JSON: stored keys' hashes were made with it, and must still match. */
function firstRelease(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(firstRelease).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${firstRelease(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('canonical JSON across releases', () => {
  it("is the first release's text for any parsed body", () => {
    const random = seededRandom(7);
    const names = ['a', 'b', 'Z', 'é', '', '10', '2', 'siteCode', 'a"b', 'x y'];
    const anyValue = (depth: number): unknown => {
      const pick = Math.floor(random() * (depth > 3 ? 5 : 7));
      if (pick === 0) return null;
      if (pick === 1) return random() < 0.5;
      if (pick === 2) return Math.floor(random() * 2000) / 7;
      if (pick === 3) return `${names[Math.floor(random() * names.length)]!}\n\u2028`;
      if (pick === 4) return undefined;
      if (pick === 5) return Array.from({ length: Math.floor(random() * 4) }, () => anyValue(depth + 1));
      const object: Record<string, unknown> = {};
      for (let count = Math.floor(random() * 5); count > 0; count--)
        object[names[Math.floor(random() * names.length)]!] = anyValue(depth + 1);
      return object;
    };
    for (let index = 0; index < 5_000; index++) {
      const value = anyValue(0);
      expect(canonicalJson(value)).toBe(firstRelease(value));
    }
  });
});
