/**
 * Deliveries claimed at birth (wake-workers.ts's `BirthClaim`): a worker of this process claims, for their
 * first attempt, the deliveries an event about to be written will queue, and launches them once the event
 * has committed, read back with their event and target as a claim returns them. It saves the worker
 * finding and claiming them after the commit: a statement that reads the queue and an update of each row.
 *
 * Each claim holds one of the worker's shared slots from when it is granted until the create has settled
 * without queuing any, or its deliveries have been launched (then they are in flight). Should reading them
 * back fail, or the worker stop first, their leases run out and they are claimed again, as after any
 * worker's death.
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
  /** Starts the attempt of a delivery read back, unless the worker has stopped meanwhile. */
  launch: (delivery: ClaimedDelivery) => void;
}

export class BirthClaims {
  /** One per claim not yet settled or launched (resolved then), with its tenant. */
  private readonly open = new Map<Promise<void>, string>();

  constructor(private readonly deps: BirthClaimsDeps) {}

  /** The claims holding a slot. */
  get size(): number {
    return this.open.size;
  }

  /** The tenant of each claim holding a slot. */
  tenants(): IterableIterator<string> {
    return this.open.values();
  }

  /** Resolves when the claims open now have settled or been launched. */
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
        void this.launchClaimed(eventId, leasedUntil).finally(release);
      },
      settled: () => {
        if (!delivering) release();
      },
    };
  }

  private async launchClaimed(eventId: string, leasedUntil: Date): Promise<void> {
    try {
      for (const delivery of await readClaimedAtBirth(this.deps.db, eventId, leasedUntil)) this.deps.launch(delivery);
    } catch (error) {
      this.deps.logger.warn(
        { err: error, eventId },
        'webhook deliveries claimed at birth could not be read back; they will be claimed again once their leases run out',
      );
    }
  }
}
