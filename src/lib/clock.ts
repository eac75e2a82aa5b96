/** Time, injectable so that tests can move it (token expiry, replay windows, retry schedules). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that tests set and advance by hand; it starts at the real time. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date = new Date()) {
    this.current = start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(time: Date): void {
    this.current = time.getTime();
  }
}

/**
 * The time of a change to a row locked for it: `now`, unless the row's last change is later. A request reads
 * the clock before it waits for the row's lock; a writer that waited behind another one would otherwise give
 * the newer version an older updatedAt (and its event an earlier occurredAt), and a client following changes
 * by updatedAt would miss it.
 */
export function notBefore(now: Date, last: Date): Date {
  return now.getTime() >= last.getTime() ? now : new Date(last.getTime());
}
