/**
 * SPEC Limits: N requests per minute per observed client address, counted in each process (not shared
 * between processes). A sliding window: request N+1 within any 60 seconds from one address is refused
 * with 429 and a Retry-After telling when the oldest counted request leaves the window.
 *
 * Counts every request under /api/v1, the token endpoint and unknown paths included (DECISIONS); not
 * /health, /ready, /docs, /console or the operator API. Hand-written rather than @fastify/rate-limit
 * because it must also cover the 404 handler and answer the token endpoint in OAuth's error format.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { Problem } from './problem.js';

const WINDOW_SECONDS = 60;
const WINDOW_MS = WINDOW_SECONDS * 1000;

/** One address's counts per second of the last minute, in a ring, with their running total. */
interface Window {
  counts: Uint32Array;
  /** The second (since the epoch) of the latest counted request. */
  latest: number;
  total: number;
}

/**
 * A sliding window of one minute in one-second steps: O(1) time and 60 counters per address, whatever
 * the limit (benchmarks raise it to millions).
 */
export class SlidingWindowLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limit: number,
    private readonly clock: Clock,
  ) {}

  /** Counts a request; returns seconds to wait when it is over the limit (and then does not count it). */
  take(address: string): number | undefined {
    const second = Math.floor(this.clock.now().getTime() / 1000);
    let window = this.windows.get(address);
    if (!window) {
      window = { counts: new Uint32Array(WINDOW_SECONDS), latest: second, total: 0 };
      this.windows.set(address, window);
    }
    this.expire(window, second);
    if (window.total >= this.limit) {
      // Wait until the oldest second that still holds requests leaves the window.
      for (let age = WINDOW_SECONDS - 1; age >= 0; age--) {
        if (window.counts[(second - age) % WINDOW_SECONDS]! > 0) return WINDOW_SECONDS - age;
      }
      return 1;
    }
    window.counts[second % WINDOW_SECONDS]! += 1;
    window.total += 1;
    return undefined;
  }

  private expire(window: Window, second: number): void {
    if (second <= window.latest) return;
    const steps = Math.min(second - window.latest, WINDOW_SECONDS);
    for (let step = 1; step <= steps; step++) {
      const slot = (window.latest + step) % WINDOW_SECONDS;
      window.total -= window.counts[slot]!;
      window.counts[slot] = 0;
    }
    window.latest = second;
  }

  /** Drops addresses with nothing left in the window, so memory follows active clients only. */
  sweep(): void {
    const second = Math.floor(this.clock.now().getTime() / 1000);
    for (const [address, window] of this.windows) {
      if (second - window.latest >= WINDOW_SECONDS) this.windows.delete(address);
    }
  }
}

export function registerRateLimit(
  app: FastifyInstance,
  options: { limit: number; clock: Clock; onRefused?: () => void },
): void {
  const limiter = new SlidingWindowLimiter(options.limit, options.clock);
  const sweeper = setInterval(() => limiter.sweep(), WINDOW_MS);
  sweeper.unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
  app.addHook('onRequest', (request, _reply, done) => {
    const path = request.url.split('?', 1)[0]!;
    if (!path.startsWith('/api/v1/') && path !== '/api/v1') return done();
    const wait = limiter.take(request.ip);
    if (wait === undefined) return done();
    options.onRefused?.();
    done(
      new Problem(
        'rate-limit-exceeded',
        `More than ${options.limit} requests in one minute from your address. Retry after ${wait} seconds.`,
        {
          headers: { 'retry-after': String(wait) },
        },
      ),
    );
  });
}
