/**
 * The canonical JSON the Idempotency-Key check hashes (src/lib/canonical-json.ts): one text for one payload,
 * however its members were ordered or spelled, and a different text for any different payload.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/lib/canonical-json.js';

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
