/**
 * Bounded exponential backoff with jitter, so that clients failing together do not retry together, with
 * the clock, sleep and random source injectable so tests run it without real waiting, and the waits a
 * caller's abort signal ends at once.
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
  /**
   * Waits `ms`. Given a `signal`, it should end the wait when the signal aborts (the default clears its
   * timer, so nothing is left holding the process); the client does not rely on that: it stops waiting for a
   * sleep the moment the signal aborts.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

export const systemRuntime: Runtime = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const abort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', abort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', abort, { once: true });
    }),
  random: () => Math.random(),
};

/**
 * `promise`, or a rejection with `signal`'s reason as soon as it aborts (at once when it already has), as
 * fetch rejects; `onAbort` is told then. What `promise` does afterwards is ignored.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAbort?: () => void): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort?.();
      reject(signal.reason);
    };
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** The runtime's sleep, ended (rejecting with the reason) the moment `signal` aborts. */
export function sleepUnlessAborted(runtime: Pick<Runtime, 'sleep'>, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return abortable(runtime.sleep(ms, signal), signal);
}

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
