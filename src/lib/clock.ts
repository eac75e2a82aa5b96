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
