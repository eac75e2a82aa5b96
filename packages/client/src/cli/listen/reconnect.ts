/**
 * How `svc listen` waits between attempts to open a listener or its stream: the client's backoff with jitter,
 * or the service's Retry-After when longer, and a wait that Ctrl-C ends at once; and a failure to open, said in
 * a few words.
 */
import { describeCause, UncertainResultError } from '../../errors.js';
import { backoffDelay, DEFAULT_RETRY, type RetryOptions, retryAfterMs } from '../../retry.js';

/**
 * The client's backoff (retry.ts, with jitter), 250-500 ms at first and at most 2.5-5 s: a listener outlives
 * a dropped stream only for its grace (60 s by default), so a waiting command must be back soon after the
 * service is.
 */
export const RECONNECT_BACKOFF: RetryOptions = { ...DEFAULT_RETRY, baseDelayMs: 500, maxDelayMs: 5_000 };
/** A timer's wait that ends at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** The wait before attempt `failures + 1`: the backoff, or the service's Retry-After when longer (bounded). */
export function reconnectDelay(failures: number, retryAfter: number | undefined, random: () => number): number {
  return Math.max(
    backoffDelay(failures, RECONNECT_BACKOFF, random),
    Math.min(retryAfter ?? 0, RECONNECT_BACKOFF.maxRetryAfterMs),
  );
}

/** The Retry-After of an error's answer, in ms, if it had one. */
export function retryAfterOf(error: unknown, nowMs: number): number | undefined {
  const headers = (error as { headers?: unknown }).headers;
  return headers instanceof Headers ? retryAfterMs(headers.get('retry-after'), nowMs) : undefined;
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A failure to open a listener, in a few words: an uncertain POST's status or network failure, not its advice. */
export function describeOpenFailure(error: unknown): string {
  if (!(error instanceof UncertainResultError)) return describeCause(error);
  if (error.problem) return `${error.problem.status} ${error.problem.title}`;
  return error.cause === undefined ? error.reason : describeCause(error.cause);
}
