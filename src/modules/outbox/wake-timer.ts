/**
 * The delivery worker's timer: at most one wake pending, set for the next due delivery after a claim, or
 * brought forward for a retry this process has just scheduled. It runs on real time (setTimeout); the
 * caller computes each delay from its injectable clock. It never keeps the process alive.
 */
export class WakeTimer {
  private timer: NodeJS.Timeout | undefined;
  private dueAt = 0;

  constructor(private readonly wake: () => void) {}

  /** Wakes in `delayMs`, in place of any wake already set. */
  set(delayMs: number): void {
    this.clear();
    this.dueAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, delayMs);
    this.timer.unref();
  }

  /** Wakes in `delayMs` at the latest: a wake already set for sooner stays as it is. */
  setAtLatest(delayMs: number): void {
    if (this.timer && this.dueAt <= Date.now() + delayMs) return;
    this.set(delayMs);
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
