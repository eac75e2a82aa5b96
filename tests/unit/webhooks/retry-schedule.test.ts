/**
 * The wait before each retry (retry-schedule.ts retryDelayMs): the schedule's entry for the attempt within the round,
 * the last entry repeating, each within ±20% jitter; with the configured default schedule of SPEC's 8 attempts.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { retryDelayMs } from '../../../src/modules/outbox/retry-schedule.js';

const SCHEDULE = [5_000, 300_000, 1_800_000];
const lowest = () => 0;
const middle = () => 0.5;
const highest = () => 1 - Number.EPSILON;

describe('retry schedule', () => {
  it('waits the entry of the attempt just failed, at the middle of the jitter', () => {
    expect([1, 2, 3].map((attempt) => retryDelayMs(SCHEDULE, attempt, middle))).toEqual(SCHEDULE);
  });

  it('repeats the last entry once the schedule is spent', () => {
    expect(retryDelayMs(SCHEDULE, 4, middle)).toBe(1_800_000);
    expect(retryDelayMs(SCHEDULE, 50, middle)).toBe(1_800_000);
  });

  it('jitters by ±20%, never outside', () => {
    expect(retryDelayMs(SCHEDULE, 1, lowest)).toBe(4_000);
    expect(retryDelayMs(SCHEDULE, 1, highest)).toBe(6_000);
    for (let index = 0; index < 1_000; index++) {
      const wait = retryDelayMs(SCHEDULE, 2, Math.random);
      expect(wait).toBeGreaterThanOrEqual(240_000);
      expect(wait).toBeLessThanOrEqual(360_000);
    }
  });

  it('waits nothing for a zero entry or an empty schedule', () => {
    expect(retryDelayMs([0], 3, highest)).toBe(0);
    expect(retryDelayMs([], 1, middle)).toBe(0);
  });

  it('spreads the default schedule (5s,5m,30m,2h,5h,10h,10h) over the 8 attempts of the default budget', () => {
    const { retryScheduleMs, maxAttempts } = loadConfig({}).webhook;
    expect(maxAttempts).toBe(8);
    const waits = Array.from({ length: maxAttempts - 1 }, (_, index) =>
      retryDelayMs(retryScheduleMs, index + 1, middle),
    );
    const hours = waits.reduce((sum, wait) => sum + wait, 0) / 3_600_000;
    expect(waits.map((wait) => wait / 1000)).toEqual([5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]);
    expect(hours).toBeCloseTo(27.6, 1);
  });
});
