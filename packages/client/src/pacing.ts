/**
 * Pacing by the service's rate-limit headers, so that a busy client waits instead of collecting 429s:
 * every answer under /api/v1 carries `X-RateLimit-Remaining` and `X-RateLimit-Reset` (seconds until the
 * window frees a request). Once an answer says 0 remain, the next request, of any kind and from any
 * transport of the client (the token endpoint counts too), waits until then. A 429's `Retry-After` holds
 * the following requests back the same way (the refused request itself waits in the retry rules).
 */
import { type Runtime, sleepUnlessAborted } from './retry.js';

export class RateLimitPacer {
  /** Milliseconds since the epoch before which no request is sent. */
  private resumeAt = 0;

  constructor(
    private readonly runtime: Pick<Runtime, 'now' | 'sleep'>,
    /** A wait announced beyond this is not honoured here (a 429, with its own bound, answers instead). */
    private readonly maxWaitMs: number,
  ) {}

  /**
   * Waits until the window has room, if an answer said it has none; resolves with the wait (ms). Rejects
   * with `signal`'s reason the moment it aborts.
   */
  async wait(signal?: AbortSignal): Promise<number> {
    const delay = this.resumeAt - this.runtime.now();
    if (delay <= 0) return 0;
    await sleepUnlessAborted(this.runtime, delay, signal);
    return delay;
  }

  /** Reads an answer's headers: remaining 0 (or a 429 with Retry-After) holds the next requests back. */
  observe(status: number, headers: Headers, retryAfterMs: number | undefined): void {
    let waitMs: number | undefined;
    const remaining = headers.get('x-ratelimit-remaining');
    const reset = headers.get('x-ratelimit-reset');
    if (remaining !== null && reset !== null && Number(remaining.trim()) === 0 && /^\s*\d+\s*$/.test(reset)) {
      waitMs = Number(reset) * 1000;
    }
    if (status === 429 && retryAfterMs !== undefined) waitMs = Math.max(waitMs ?? 0, retryAfterMs);
    if (waitMs === undefined || waitMs > this.maxWaitMs) return;
    // Answers of concurrent requests arrive in any order: a hold is only ever extended.
    this.resumeAt = Math.max(this.resumeAt, this.runtime.now() + waitMs);
  }
}
