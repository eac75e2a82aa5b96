/**
 * The rate limit's arithmetic (DECISIONS: request N+1 inside any one minute from one address is refused),
 * apart from HTTP so that it is unit-tested with plain numbers.
 *
 * Each address keeps its requests of the last minute in one-second buckets, with the millisecond of the
 * latest request of each bucket. A bucket leaves the window when its latest request is 60 s old, so no
 * minute ever holds more than N counted requests (a bucket is at most one second conservative for its
 * earlier requests), unlike a fixed window, which lets 2N through around a window's edge. O(1) time and
 * 61 counters per address, whatever the limit (benchmarks raise it to millions).
 */

const WINDOW_MS = 60_000;
/** The current second and the 60 before it: the oldest may still hold requests younger than a minute. */
const SLOTS = 61;

/** Where one address stands after a request; a fresh object per call. */
export interface WindowDecision {
  /** The request was counted; false: refused and not counted. */
  allowed: boolean;
  /** The limit. */
  limit: number;
  /** Requests the address may still make now. */
  remaining: number;
  /**
   * Whole seconds until the oldest counted request leaves the window, when `remaining` grows again (the
   * Retry-After of a refusal); 0 when nothing is counted.
   */
  resetSeconds: number;
}

interface AddressWindow {
  /** Requests counted per second, in a ring indexed by second % SLOTS. */
  counts: Uint32Array;
  /** The millisecond within its second of each bucket's latest request. */
  latestMillis: Uint16Array;
  /** The latest second seen (the ring holds seconds second-60 … second). */
  second: number;
  total: number;
  /** The earliest second whose bucket holds requests (when total > 0). */
  oldest: number;
}

const slotOf = (second: number) => ((second % SLOTS) + SLOTS) % SLOTS;

export class SlidingWindowLimiter {
  private readonly windows = new Map<string, AddressWindow>();

  constructor(readonly limit: number) {}

  /**
   * Counts a request of `address` at `now` (ms since the epoch), unless it is over the limit. A `weight` above 1
   * counts that many at once (a rename's rewritten visits): it is admitted while the window holds less than the
   * limit, and may take it past the limit, which then refuses until enough has left the window.
   */
  take(address: string, now: number, weight = 1): WindowDecision {
    let window = this.windows.get(address);
    if (!window) {
      window = {
        counts: new Uint32Array(SLOTS),
        latestMillis: new Uint16Array(SLOTS),
        second: Math.floor(now / 1000),
        total: 0,
        oldest: 0,
      };
      this.windows.set(address, window);
    }
    // A clock that steps back counts in the latest second seen.
    const at = Math.max(now, window.second * 1000);
    const second = Math.floor(at / 1000);
    this.expire(window, second, at);
    if (window.total >= this.limit) return this.decision(window, false, at);
    const slot = slotOf(second);
    const millis = at - second * 1000;
    // A fresh bucket takes this request's millisecond; a used one keeps its latest.
    if (window.counts[slot] === 0 || millis > window.latestMillis[slot]!) window.latestMillis[slot] = millis;
    window.counts[slot]! += weight;
    if (window.total === 0) window.oldest = second;
    window.total += weight;
    return this.decision(window, true, at);
  }

  /** Where `address` stands at `now`, counting nothing: `allowed` says whether a request would be counted. */
  peek(address: string, now: number): WindowDecision {
    const window = this.windows.get(address);
    if (!window) return { allowed: true, limit: this.limit, remaining: this.limit, resetSeconds: 0 };
    const at = Math.max(now, window.second * 1000);
    this.expire(window, Math.floor(at / 1000), at);
    return this.decision(window, window.total < this.limit, at);
  }

  private decision(window: AddressWindow, allowed: boolean, now: number): WindowDecision {
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - window.total),
      resetSeconds: resetSeconds(window, now, allowed ? 1 : window.total - this.limit + 1),
    };
  }

  private expire(window: AddressWindow, second: number, now: number): void {
    if (second > window.second) {
      // Slots of the seconds that passed held seconds 61 or more before: all older than a minute.
      const steps = Math.min(second - window.second, SLOTS);
      for (let step = 1; step <= steps; step++) {
        const slot = slotOf(window.second + step);
        window.total -= window.counts[slot]!;
        window.counts[slot] = 0;
      }
      window.second = second;
    }
    // The bucket of 60 seconds ago leaves once its latest request is a minute old.
    const edge = slotOf(second + 1);
    if (window.counts[edge]! > 0 && now - ((second - 60) * 1000 + window.latestMillis[edge]!) >= WINDOW_MS) {
      window.total -= window.counts[edge]!;
      window.counts[edge] = 0;
    }
    if (window.total === 0) return;
    if (window.oldest >= second - 60 && window.counts[slotOf(window.oldest)]! > 0) return;
    for (let candidate = Math.max(window.oldest + 1, second - 60); candidate <= second; candidate++) {
      if (window.counts[slotOf(candidate)]! > 0) {
        window.oldest = candidate;
        return;
      }
    }
  }

  /** Drops addresses with nothing left in the window, so memory follows active clients only. */
  sweep(now: number): void {
    const second = Math.floor(now / 1000);
    for (const [address, window] of this.windows) {
      if (second - window.second > 60) this.windows.delete(address);
    }
  }

  /** Addresses with a window in memory (for tests of the sweep). */
  get size(): number {
    return this.windows.size;
  }
}

/**
 * Whole seconds until at least `count` counted requests have left the window: 1 when `remaining` grows again; on a
 * refusal, as many as take the total below the limit (more than the oldest bucket's when requests were weighted).
 */
function resetSeconds(window: AddressWindow, now: number, count: number): number {
  if (window.total === 0) return 0;
  let left = 0;
  let second = window.oldest;
  for (; second < window.second; second++) {
    left += window.counts[slotOf(second)]!;
    if (left >= count) break;
  }
  const leaves = second * 1000 + window.latestMillis[slotOf(second)]! + WINDOW_MS;
  return Math.max(1, Math.ceil((leaves - now) / 1000));
}
