/** `isoTimeOf` (src/lib/iso-time.ts) writes exactly what `Date#toISOString` writes, for every time. */
import { describe, expect, it } from 'vitest';
import { isoTimeOf } from '../../../src/lib/iso-time.js';
import { seededRandom } from '../../helpers/seeded-random.js';

const both = (time: number) => {
  const date = new Date(time);
  return [isoTimeOf(date), date.toISOString()];
};

describe('isoTimeOf', () => {
  it('agrees with toISOString at the edges: the epoch, leap days, centuries, the last instant of 9999', () => {
    const edges = [
      '1970-01-01T00:00:00.000Z',
      '1972-02-29T12:00:00.001Z',
      '1999-12-31T23:59:59.999Z',
      '2000-02-29T00:00:00.000Z',
      '2000-03-01T00:00:00.000Z',
      '2024-12-31T23:59:59.999Z',
      '2100-02-28T23:59:59.999Z',
      '2100-03-01T00:00:00.000Z',
      '2400-02-29T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
    ];
    for (const text of edges) expect(both(Date.parse(text))).toEqual([text, text]);
  });

  it('agrees with toISOString on a million times spread over 1970 to 9999', () => {
    const random = seededRandom(42);
    for (let index = 0; index < 1_000_000; index++) {
      const time = Math.floor(random() * 253_402_300_800_000);
      const [ours, theirs] = both(time);
      if (ours !== theirs) expect(ours).toBe(theirs);
    }
  });

  it('the same instant again, and instants alternating, each get their own text (the last one is kept)', () => {
    const times = [0, 0, 1, 0, 1_700_000_000_123, 1_700_000_000_123, -1, -1, 1, 253_402_300_800_000, 1];
    for (const time of times) expect(isoTimeOf(new Date(time))).toBe(new Date(time).toISOString());
  });

  it('leaves other years to toISOString, and an invalid date throws as it does', () => {
    expect(both(-1)).toEqual(['1969-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z']);
    expect(isoTimeOf(new Date(253_402_300_800_000))).toBe('+010000-01-01T00:00:00.000Z');
    expect(() => isoTimeOf(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('isoTimeOf and a Date that formats itself', () => {
  it('asks a subclass of Date for its own text', () => {
    class Own extends Date {
      override toISOString(): string {
        return 'its own';
      }
    }
    expect(isoTimeOf(new Own(0))).toBe('its own');
  });
});
