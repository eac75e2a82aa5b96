/**
 * getaddrinfo, which `dns.lookup` calls, runs on libuv's thread pool: 4 threads unless UV_THREADPOOL_SIZE
 * says otherwise, shared with scrypt (every client secret the token endpoint checks) and file I/O. A lookup
 * holds its thread until the system resolver gives up, which a name under a tenant's own slow or silent
 * name server makes seconds or tens of seconds; the policy's timeout stops waiting, not the thread. So
 * lookups take one of a few slots, fewer than the pool's threads: a flood of slow names makes other lookups
 * wait (and time out as temporary failures), never the token endpoint.
 */

/** At most this many system lookups run at once in a process (half of libuv's default pool). */
export const SYSTEM_LOOKUP_SLOTS = 2;

interface Waiter {
  start: () => void;
  cancelled: boolean;
}

export class LookupSlots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly slots: number) {}

  /**
   * Runs `work` in a slot, once one is free. `signal` aborting while it waits gives its place up (nothing
   * runs); a slot is held until its work settles, however long the caller waits for it.
   */
  run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.running++;
        work()
          .then(resolve, reject)
          .finally(() => {
            this.running--;
            this.next();
          });
      };
      if (this.running < this.slots) return start();
      const waiter: Waiter = { start, cancelled: false };
      signal.addEventListener('abort', () => {
        waiter.cancelled = true;
        reject(signal.reason);
      });
      this.waiting.push(waiter);
    });
  }

  private next(): void {
    while (this.running < this.slots) {
      const waiter = this.waiting.shift();
      if (!waiter) return;
      if (!waiter.cancelled) waiter.start();
    }
  }
}
