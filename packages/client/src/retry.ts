/**
 * Bounded exponential backoff with jitter, so that clients failing together do not retry together, with
 * the clock, sleep and random source injectable so tests run it without real waiting.
 */

export interface RetryOptions {
  /** Attempts in all, the first included (default 5). */
  maxAttempts: number;
  /** The first wait before jitter (default 500 ms); each further wait doubles. */
  baseDelayMs: number;
  /** Cap of one computed wait (default 30 s). */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is returned at once (default 120 s). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

export interface Runtime {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

export const systemRuntime: Runtime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
};

/**
 * The wait before retry number `retry` (1 for the first retry): "equal jitter", half the exponential step
 * plus a random part of the other half, so simultaneous clients spread out but never retry at once.
 */
export function backoffDelay(retry: number, options: RetryOptions, random: () => number): number {
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (retry - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/** Retry-After as milliseconds (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
