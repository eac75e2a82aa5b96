/**
 * The rate limit's window with plain numbers: request N+1 inside any one minute is refused, including a
 * burst at a window's edge (which a fixed window lets through twice), and remaining/reset say where an
 * address stands.
 */
import { describe, expect, it } from 'vitest';
import { SlidingWindowLimiter } from '../../../src/http/sliding-window.js';

const LIMIT = 100;
/** A start in the middle of a second, so whole-second arithmetic would show. */
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0) + 400;

function burst(limiter: SlidingWindowLimiter, count: number, at: number, address = '192.0.2.1') {
  return Array.from({ length: count }, () => limiter.take(address, at));
}

describe('sliding window of one minute', () => {
  it('counts N requests, refuses request N+1 with remaining 0 and the wait until the oldest leaves', () => {
    const limiter = new SlidingWindowLimiter(LIMIT);
    const answers = burst(limiter, LIMIT, T0);
    expect(answers.every((answer) => answer.allowed)).toBe(true);
    expect(answers[0]).toEqual({ allowed: true, limit: LIMIT, remaining: LIMIT - 1, resetSeconds: 60 });
    expect(answers.at(-1)!.remaining).toBe(0);
    expect(limiter.take('192.0.2.1', T0 + 1)).toEqual({ allowed: false, limit: LIMIT, remaining: 0, resetSeconds: 60 });
    // Another address has its own budget.
    expect(limiter.take('192.0.2.2', T0).allowed).toBe(true);
  });

  it('a burst at the edge of a clock minute: 100 just before it, the next within the minute after is refused', () => {
    const limiter = new SlidingWindowLimiter(LIMIT);
    // 100 requests in the last 100 ms of a clock minute; a fixed window would open a fresh 100 at :00.
    const edge = Date.UTC(2026, 0, 1, 12, 1, 0);
    for (let index = 0; index < LIMIT; index++) expect(limiter.take('a', edge - 100 + index).allowed).toBe(true);
    for (const delay of [0, 1, 500, 30_000, 59_000]) {
      const answer = limiter.take('a', edge + delay);
      expect(answer.allowed, `${delay} ms after the edge`).toBe(false);
      expect(answer.remaining).toBe(0);
    }
    // The latest of the burst (edge - 1) is a minute old at edge + 59 999: then, and not before, they leave.
    expect(limiter.take('a', edge + 59_998).allowed).toBe(false);
    expect(limiter.take('a', edge + 59_999).allowed).toBe(true);
  });

  it('never lets N+1 requests into any 60 s span, whatever their spacing', () => {
    const limiter = new SlidingWindowLimiter(10);
    const accepted: number[] = [];
    // Requests every 137 ms for five minutes: far more than the limit.
    for (let at = T0; at < T0 + 300_000; at += 137) if (limiter.take('a', at).allowed) accepted.push(at);
    for (let index = 10; index < accepted.length; index++) {
      expect(accepted[index]! - accepted[index - 10]!).toBeGreaterThanOrEqual(60_000);
    }
    // And it is not overly strict: at least 10 per minute get through.
    expect(accepted.length).toBeGreaterThanOrEqual(50);
  });

  it('reset is the wait until the oldest counted request leaves, and requests pass again after it', () => {
    const limiter = new SlidingWindowLimiter(5);
    limiter.take('a', T0);
    for (let index = 1; index < 5; index++) limiter.take('a', T0 + 20_000);
    const refused = limiter.take('a', T0 + 30_500);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 30 });
    // Waiting exactly the announced seconds is enough.
    expect(limiter.take('a', T0 + 30_500 + 30_000)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 20 });
    expect(limiter.take('a', T0 + 60_500).allowed).toBe(false);
    expect(limiter.take('a', T0 + 80_000)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it('refused requests are not counted, and a long pause empties the window', () => {
    const limiter = new SlidingWindowLimiter(3);
    burst(limiter, 3, T0, 'a');
    for (let index = 0; index < 50; index++) expect(limiter.take('a', T0 + index * 1000).allowed).toBe(false);
    expect(limiter.take('a', T0 + 60_000)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
    expect(limiter.take('a', T0 + 3_600_000)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
  });

  it('a clock that steps back counts in the latest second seen', () => {
    const limiter = new SlidingWindowLimiter(2);
    limiter.take('a', T0);
    expect(limiter.take('a', T0 - 3_600_000).allowed).toBe(true);
    expect(limiter.take('a', T0 - 3_600_000).allowed).toBe(false);
    expect(limiter.take('a', T0 + 60_000).allowed).toBe(true);
  });

  it('peek says where an address stands without counting, and keeps no window for an unknown one', () => {
    const limiter = new SlidingWindowLimiter(3);
    expect(limiter.peek('192.0.2.1', T0)).toEqual({ allowed: true, limit: 3, remaining: 3, resetSeconds: 0 });
    expect(limiter.size).toBe(0);
    burst(limiter, 3, T0);
    expect(limiter.peek('192.0.2.1', T0 + 10_000)).toEqual({
      allowed: false,
      limit: 3,
      remaining: 0,
      resetSeconds: 50,
    });
    expect(limiter.peek('192.0.2.1', T0 + 10_000)).toEqual({
      allowed: false,
      limit: 3,
      remaining: 0,
      resetSeconds: 50,
    });
    expect(limiter.peek('192.0.2.1', T0 + 60_000)).toEqual({ allowed: true, limit: 3, remaining: 3, resetSeconds: 0 });
  });

  it('sweep forgets addresses whose window is empty, and only those', () => {
    const limiter = new SlidingWindowLimiter(LIMIT);
    limiter.take('old', T0);
    limiter.take('new', T0 + 30_000);
    limiter.sweep(T0 + 62_000);
    expect(limiter.size).toBe(1);
    burst(limiter, LIMIT - 1, T0 + 62_000, 'new');
    // The sweep kept new's count: its request at T0 + 30 s is still in the window.
    expect(limiter.take('new', T0 + 62_000).allowed).toBe(false);
  });

  it('a weighted take is admitted under the limit, may pass it, and refuses until enough has left', () => {
    const limiter = new SlidingWindowLimiter(10);
    expect(limiter.take('t', T0, 4)).toEqual({ allowed: true, limit: 10, remaining: 6, resetSeconds: 60 });
    expect(limiter.take('t', T0 + 20_000, 30).allowed).toBe(true);
    // 34 counted: the refusal lasts until the second take's 30 leave too, not only the first's 4.
    expect(limiter.take('t', T0 + 30_000, 1)).toEqual({ allowed: false, limit: 10, remaining: 0, resetSeconds: 50 });
    expect(limiter.take('t', T0 + 60_000, 1).allowed).toBe(false);
    expect(limiter.take('t', T0 + 80_000, 1)).toEqual({ allowed: true, limit: 10, remaining: 9, resetSeconds: 60 });
  });
});
