import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestamptz, StoredTimestamp } from '../../../src/db/timestamps.js';

const pgParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => unknown;

/** The time and the ISO form pg's own parser and toISOString give. */
function expected(text: string) {
  const value = pgParser(text);
  return value instanceof Date ? { time: value.getTime(), iso: value.toISOString() } : { time: value, iso: undefined };
}

function actual(text: string) {
  const value = parseTimestamptz(text);
  return value instanceof Date ? { time: value.getTime(), iso: value.toISOString() } : { time: value, iso: undefined };
}

describe('timestamptz parsing', () => {
  it('gives the time and ISO form of pg’s parser for every fraction length', () => {
    const texts = [
      '2026-11-25 23:38:17+00',
      '2026-11-25 23:38:17.5+00',
      '2026-11-25 23:38:17.54+00',
      '2026-11-25 23:38:17.544+00',
      '2026-11-25 23:38:17.5446+00',
      '2026-11-25 23:38:17.54463+00',
      '2026-11-25 23:38:17.544638+00',
      '2026-11-25 23:38:17.999999+00',
      '2026-11-25 23:38:17.001+00',
      '2024-02-29 00:00:00.291+00',
      '1970-01-01 00:00:00+00',
      '1000-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999999+00',
    ];
    for (const text of texts) {
      expect(actual(text), text).toEqual(expected(text));
      expect(parseTimestamptz(text), text).toBeInstanceOf(StoredTimestamp);
    }
  });

  it('agrees with pg’s parser on random times to the microsecond', () => {
    for (let index = 0; index < 2_000; index++) {
      const time = Math.floor(Math.random() * 4_000_000_000_000);
      const micros = String(Math.floor(Math.random() * 1_000_000))
        .padStart(6, '0')
        .replace(/0+$/, '');
      const text = `${new Date(time).toISOString().slice(0, 19).replace('T', ' ')}${micros ? `.${micros}` : ''}+00`;
      expect(actual(text), text).toEqual(expected(text));
    }
  });

  it('leaves other shapes to pg’s parser', () => {
    for (const text of [
      '2026-11-25 23:38:17+01',
      '2026-11-25 23:38:17.5+05:30',
      '0099-01-01 00:00:00+00',
      '0099-01-01 00:00:00+00 BC',
      '12026-11-25 23:38:17+00',
      'infinity',
      '-infinity',
    ]) {
      expect(actual(text), text).toEqual(expected(text));
      expect(parseTimestamptz(text), text).not.toBeInstanceOf(StoredTimestamp);
    }
  });

  it('formats a changed Date from its new time', () => {
    const value = parseTimestamptz('2026-11-25 23:38:17.544+00') as Date;
    value.setTime(0);
    expect(value.toISOString()).toBe('1970-01-01T00:00:00.000Z');
    expect(JSON.stringify({ value })).toBe('{"value":"1970-01-01T00:00:00.000Z"}');
  });
});
