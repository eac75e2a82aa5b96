/**
 * Deliveries claimed at birth (wake-workers.ts's `BirthClaim`): a worker of this process claims, for their
 * first attempt, the deliveries an event about to be written will queue, and takes them once the event has
 * committed, with their event and target as the statement that queued them returned them. It saves the
 * worker finding and claiming them after the commit: a statement that reads the queue and an update of each
 * row.
 *
 * A claim is granted while a shared slot is free, but holds none while its create runs (a create may wait
 * for its statement far longer than an attempt takes): once committed, its deliveries are
 * handed to the worker, which starts them as soon as a slot is free (worker.ts, `startReady`). The claims
 * open and the deliveries handed over but not started are at most WEBHOOK_CONCURRENCY together, so none
 * waits much longer than a round of attempts; one whose lease would run out before its attempt could end is
 * not started. Should the worker stop first, their leases run out and they are claimed again, as after any
 * worker's death.
 */
import type { Clock } from '../../lib/clock.js';
import type { ClaimedDelivery } from './types.js';
import type { BirthClaim } from './wake-workers.js';

export interface BirthClaimsDeps {
  clock: Clock;
  leaseMs: number;
  /** Hands over a delivery claimed at birth, leased until `leasedUntil`, for the worker to start when a slot is free. */
  handOver: (delivery: ClaimedDelivery, leasedUntil: Date) => void;
}

export class BirthClaims {
  /** One per claim whose create is under way (resolved when it settles or its deliveries are handed over), with its tenant. */
  private readonly open = new Map<Promise<void>, string>();

  constructor(private readonly deps: BirthClaimsDeps) {}

  /** The claims open: their creates under way. */
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
    let resolve!: () => void;
    const open = new Promise<void>((settle) => (resolve = settle));
    this.open.set(open, tenantId);
    const release = () => {
      this.open.delete(open);
      resolve();
    };
    let handedOver = false;
    return {
      claimedAt,
      leasedUntil,
      // Whichever of the two comes first: a create's statement may settle before its commit's effects run.
      committed: (deliveries) => {
        if (handedOver) return;
        handedOver = true;
        release();
        for (const delivery of deliveries) this.deps.handOver(delivery, leasedUntil);
      },
      settled: release,
    };
  }
}
