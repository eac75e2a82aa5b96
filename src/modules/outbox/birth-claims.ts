/**
 * Deliveries claimed at birth (wake-workers.ts's `BirthClaim`): a worker of this process claims, for their
 * first attempt, the deliveries an event about to be written will queue, and hands them to it once the event
 * has committed, read back with their event and target as a claim returns them. It saves the worker
 * finding and claiming them after the commit: a statement that reads the queue and an update of each row.
 *
 * A claim is granted while a shared slot is free, but holds none while its create runs (a create may wait
 * for its statement far longer than an attempt takes): once committed and read back, its deliveries are
 * handed to the worker, which starts them as soon as a slot is free (worker.ts, `startReady`). The claims
 * open and the deliveries handed over but not started are at most WEBHOOK_CONCURRENCY together, so none
 * waits much longer than a round of attempts; one whose lease would run out before its attempt could end is
 * not started. Should reading them back fail, or the worker stop first, their leases run out and they are
 * claimed again, as after any worker's death.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { type ClaimedDelivery, readClaimedAtBirth } from './claiming.js';
import type { BirthClaim } from './wake-workers.js';

export interface BirthClaimsDeps {
  db: Kysely<Database>;
  clock: Clock;
  leaseMs: number;
  logger: Logger;
  /** Hands over a delivery read back, leased until `leasedUntil`, for the worker to start when a slot is free. */
  handOver: (delivery: ClaimedDelivery, leasedUntil: Date) => void;
}

export class BirthClaims {
  /** One per claim not yet settled or handed over (resolved then), with its tenant. */
  private readonly open = new Map<Promise<void>, string>();

  constructor(private readonly deps: BirthClaimsDeps) {}

  /** The claims open: their creates under way, or their deliveries being read back. */
  get size(): number {
    return this.open.size;
  }

  /** The tenant of each open claim. */
  tenants(): IterableIterator<string> {
    return this.open.values();
  }

  /** Resolves when the claims open now have settled or been handed over. */
  async settled(): Promise<void> {
    await Promise.all(this.open.keys());
  }

  claim(tenantId: string): BirthClaim {
    const claimedAt = this.deps.clock.now();
    const leasedUntil = new Date(claimedAt.getTime() + this.deps.leaseMs);
    let release!: () => void;
    const open: Promise<void> = new Promise<void>((resolve) => (release = resolve)).finally(() =>
      this.open.delete(open),
    );
    this.open.set(open, tenantId);
    let delivering = false;
    return {
      claimedAt,
      leasedUntil,
      committed: (eventId, deliveries) => {
        if (deliveries === 0 || delivering) return;
        delivering = true;
        void this.handOverClaimed(eventId, leasedUntil).finally(release);
      },
      settled: () => {
        if (!delivering) release();
      },
    };
  }

  private async handOverClaimed(eventId: string, leasedUntil: Date): Promise<void> {
    try {
      for (const delivery of await readClaimedAtBirth(this.deps.db, eventId, leasedUntil))
        this.deps.handOver(delivery, leasedUntil);
    } catch (error) {
      this.deps.logger.warn(
        { err: error, eventId },
        'webhook deliveries claimed at birth could not be read back; they will be claimed again once their leases run out',
      );
    }
  }
}
