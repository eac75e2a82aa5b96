/**
 * A steady pace of requests, below the service's rate limit (its API reference advises 20 to 60 creates per
 * minute for imports): each row starts at least 60 000 / rate ms after the previous one, never in bursts.
 */
import type { Runtime } from '../../retry.js';

/** The service's rate limit: requests per minute per client address ("Rate limit" in its API reference). */
export const RATE_LIMIT_PER_MINUTE = 100;
export const DEFAULT_RATE = 30;
/** The fastest pace accepted without the test-only override: strictly below the limit. */
export const MAX_RATE = RATE_LIMIT_PER_MINUTE - 1;

export class Pacer {
  private next: number | undefined;

  constructor(
    readonly perMinute: number,
    private readonly runtime: Pick<Runtime, 'now' | 'sleep'>,
  ) {}

  get intervalMs(): number {
    return 60_000 / this.perMinute;
  }

  /** Waits for the next slot. */
  async wait(): Promise<void> {
    const now = this.runtime.now();
    const start = Math.max(now, this.next ?? now);
    if (start > now) await this.runtime.sleep(start - now);
    this.next = start + this.intervalMs;
  }
}
