import { describe, expect, it } from 'vitest';
import { parseQueryString } from '../../../src/http/query-string.js';
import { seededRandom } from '../../helpers/seeded-random.js';
import {
  boundedDateTimeFormat,
  integerParameters,
  integerSpellingErrors,
  NUL_MESSAGE,
  unstorableText,
  unstorableTextError,
} from '../../../src/http/request-values.js';

describe('the date-time format: RFC 3339 with a zone, 1900-01-01T00:00:00Z through 9999-12-31T23:59:59Z in UTC', () => {
  const valid = (value: string) => boundedDateTimeFormat.validate(value);

  it.each([
    '1900-01-01T00:00:00Z',
    '1899-12-31T23:00:00-01:00',
    '1899-12-31T23:59:59.999-00:01',
    '2026-11-22T09:00:00.123456+02:00',
    '2026-11-22t09:00:00z',
    '2026-11-22 09:00:00Z',
    '2026-11-22T09:00:00+0100',
    '9999-12-31T23:59:59Z',
    '9999-12-31T23:59:59.000Z',
    '9999-12-31T22:59:59-01:00',
    '9999-12-31T23:30:00+01:00',
    '9999-12-31T23:59:59+00:00',
  ])('accepts %s', (value) => expect(valid(value)).toBe(true));

  it.each([
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+14:00',
    '0099-06-01T00:00:00Z',
    '1899-12-31T23:59:59Z',
    '1899-12-31T23:59:59.999Z',
    '1900-01-01T00:00:00+00:01',
    '1900-01-01T00:59:59+01:00',
    '9999-12-31T23:59:59.001Z',
    '9999-12-31T23:59:59.0000001Z',
    '9999-12-31T23:59:59-00:01',
    '9999-12-31T23:59:60Z',
    '2016-12-31T23:59:60Z',
    '2026-11-22T09:00:00+01',
    '+010000-01-01T00:00:00Z',
    '10000-01-01T00:00:00Z',
    '2026-11-22T09:00:00',
    '2026-02-30T09:00:00Z',
    '2026-11-22',
  ])('refuses %s', (value) => expect(valid(value)).toBe(false));
});

describe('text the database cannot hold as sent', () => {
  it.each(['a\u0000b'])('refuses U+0000', (text) => expect(unstorableText(text)).toMatch(/U\+0000/));
  it.each(['a\ud800b', '\udfff', 'SC-\ud800', 'x\udbff', '\udc00x', '\ud83d'])(
    'refuses the lone surrogate in %j',
    (text) => expect(unstorableText(text)).toMatch(/lone surrogate/),
  );
  it.each(['', 'plain', 'Store 😀', '\ud83d\ude00', 'é\u00ff\ufffd'])('accepts %j', (text) =>
    expect(unstorableText(text)).toBeUndefined(),
  );
});

describe('integer parameters in plain digits', () => {
  const schema = {
    type: 'object',
    properties: { 'page[size]': { type: 'integer' }, 'page[after]': { type: 'string' }, limit: { type: 'integer' } },
  };

  it('finds the integer parameters of a schema', () =>
    expect(integerParameters(schema)).toEqual(['page[size]', 'limit']));

  it.each(['0x10', '1e1', '+5', ' 5', '5 ', '5.0', '0b1', '0o7', '', 'Infinity', '١٠'])('refuses %j', (raw) => {
    const errors = integerSpellingErrors({ 'page[size]': raw }, integerParameters(schema));
    expect(errors.map((error) => error.instancePath)).toEqual(['/page[size]']);
  });

  it.each(['5', '05', '100', '-1', '0'])('leaves %j to the schema', (raw) =>
    expect(integerSpellingErrors({ 'page[size]': raw, limit: raw }, ['page[size]', 'limit'])).toEqual([]),
  );

  it('leaves a repeated parameter (an array) and absent ones to the schema', () =>
    expect(integerSpellingErrors({ 'page[size]': ['1', '2'] }, ['page[size]', 'limit'])).toEqual([]));
});

describe('the query string parser', () => {
  it('reads names and values as fast-querystring does', () => {
    const parsed = parseQueryString('a=1&b=x+y&a=2&c&=e&&d=%2B%26%3D&e=%F0%9F%98%80');
    expect({ ...parsed }).toEqual({ a: ['1', '2'], b: 'x y', c: '', '': 'e', d: '+&=', e: '😀' });
    expect(Object.getPrototypeOf(parsed)).toBeNull();
  });

  it('keeps a % that starts no escape', () => {
    expect({ ...parseQueryString('a=100%&b=%zz&c=%4') }).toEqual({ a: '100%', b: '%zz', c: '%4' });
    expect({ ...parseQueryString('a=%zz%41') }).toEqual({ a: '%zzA' });
  });

  it('turns each byte that is not UTF-8 into a lone surrogate, U+DC00 + the byte', () => {
    expect({ ...parseQueryString('a=%ED%A0%80&b=x%FFy&c=%C3%28&d=%C0%AF&e=%F4%90%80%80') }).toEqual({
      a: '\udced\udca0\udc80',
      b: 'x\udcffy',
      c: '\udcc3(',
      d: '\udcc0\udcaf',
      e: '\udcf4\udc90\udc80\udc80',
    });
    expect({ ...parseQueryString('%FF=1&ok=%C3%A9%FF%zz') }).toEqual({ '\udcff': '1', ok: 'é\udcff%zz' });
  });

  it('decodes any bytes as a fatal UTF-8 decoder does, sequence by sequence (5,000 generated values)', () => {
    // The reference: a strict decoder tried on each sequence its lead byte announces, a byte it refuses escaped.
    const strict = new TextDecoder('utf-8', { fatal: true });
    const announced = (lead: number) =>
      lead < 0x80 ? 1 : lead < 0xc2 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf5 ? 4 : 0;
    const reference = (bytes: number[]) => {
      let text = '';
      for (let index = 0; index < bytes.length; ) {
        const length = announced(bytes[index]!);
        try {
          if (length === 0 || index + length > bytes.length) throw new Error('no sequence');
          text += strict.decode(Uint8Array.from(bytes.slice(index, index + length)));
          index += length;
        } catch {
          text += String.fromCharCode(0xdc00 + bytes[index]!);
          index += 1;
        }
      }
      return text;
    };
    const random = seededRandom(19);
    // Bytes around the edges of RFC 3629's table: leads, continuation bytes, ASCII.
    const pool = [
      0x00, 0x28, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5,
      0xff,
    ];
    for (let round = 0; round < 5_000; round++) {
      const bytes = Array.from(
        { length: 1 + Math.floor(random() * 8) },
        () => pool[Math.floor(random() * pool.length)]!,
      );
      const query = `a=${bytes.map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')}`;
      expect(parseQueryString(query).a, query).toBe(reference(bytes));
    }
  });

  it('every value it returns that is not UTF-8 is refused as text', () => {
    for (const value of Object.values(parseQueryString('a=%ED%A0%80&b=%FF&c=%E0%A4%A')))
      expect(unstorableText(value as string)).toMatch(/lone surrogate/);
  });
});

describe('unstorableTextError: the first string the database cannot hold, by its JSON pointer', () => {
  const pointer = (data: unknown) => unstorableTextError(data)?.instancePath;

  it('finds nothing in text it can hold, however nested', () => {
    expect(unstorableTextError({ a: ['x', { b: 'é', c: [1, null, true] }], 'd/e': '' })).toBeUndefined();
  });

  it('points into objects and arrays, escaping ~ and / in member names (RFC 6901)', () => {
    expect(pointer({ a: [{ b: 'ok' }, { 'c~/d': ['ok', 'x\u0000'] }] })).toBe('/a/1/c~0~1d/1');
    expect(unstorableTextError(['\u0000'])).toMatchObject({
      keyword: 'text',
      instancePath: '/0',
      message: NUL_MESSAGE,
    });
  });

  it('reports the first in document order, a member name before its value', () => {
    expect(pointer({ a: 'ok', 'b\ud800': 'x\u0000', c: 'x\u0000' })).toBe('/b\ud800');
    expect(pointer({ a: { b: '\udfff' }, c: '\u0000' })).toBe('/a/b');
    expect(pointer('\u0000')).toBe('');
  });
});
