/**
 * Deliveries claimed at birth (wake-workers.ts's `BirthClaim`): a worker of this process claims, for their
 * first attempt, the deliveries an event about to be written will queue, and takes them once the event has
 * committed, with their event and target as the statement that queued them returned them. It saves the
 * worker finding and claiming them after the commit: a statement that reads the queue and an update of each
 * row.
 *
 * A claim is granted while a shared slot is free, but holds none while its create runs (a create may wait
 * for its statement far longer than an attempt takes): once committed, its deliveries are
 * handed to the worker, which starts them as soon as a slot is free (`startReady`). The claims
 * open and the deliveries handed over but not started are at most twice WEBHOOK_CONCURRENCY together, so
 * none waits much longer than two rounds of attempts; one whose lease would run out before its attempt could end is
 * not started. Should the worker stop first, their leases run out and they are claimed again, as after any
 * worker's death.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.js';
import { destinationOf } from './fair-claim.js';
import type { ClaimedDelivery } from './types.js';
import type { BirthClaim } from './wake-workers.js';

export interface BirthClaimsDeps {
  clock: Clock;
  leaseMs: number;
  /** How long one attempt may take (attempt.ts's `attemptTimeoutMs`): a delivery is started only that far inside its lease. */
  attemptTimeoutMs: number;
  logger: Logger;
  /** How many more attempts the worker may start now. */
  freeSlots: () => number;
  /** Starts a delivery's attempt (it holds one of the worker's slots until it ends). */
  launch: (delivery: ClaimedDelivery) => void;
}

export class BirthClaims {
  /** One per claim whose create is under way (resolved when it settles or its deliveries are handed over), with its tenant. */
  private readonly open = new Map<Promise<void>, string>();
  /**
   * Deliveries claimed at birth and committed that wait for a slot (`startReady`), oldest first, each with
   * its destination (taken once: the fair claim asks for it at every claim while the delivery waits).
   */
  private readonly ready: Array<{ delivery: ClaimedDelivery; leasedUntil: Date; destination: string }> = [];
  private closed = false;

  constructor(private readonly deps: BirthClaimsDeps) {}

  /** The claims open (their creates under way) and the deliveries waiting to start. */
  get size(): number {
    return this.open.size + this.ready.length;
  }

  /** The deliveries waiting to start. */
  get waitingToStart(): number {
    return this.ready.length;
  }

  /** The deliveries waiting to start, each to a tenant's destination. */
  *readyTargets(): Iterable<{ tenantId: string; destination: string }> {
    for (const { delivery, destination } of this.ready) yield { tenantId: delivery.tenant_id, destination };
  }

  /** The tenant of each open claim. */
  tenants(): IterableIterator<string> {
    return this.open.values();
  }

  /** Resolves when the claims open now have settled or been handed over. */
  async settled(): Promise<void> {
    await Promise.all(this.open.keys());
  }

  /**
   * Starts the deliveries waiting for a slot, oldest first, while the worker has one free. One whose lease
   * would run out before its attempt could end is left to its lease: it is claimed again from the queue
   * once the lease has run out.
   */
  startReady(): void {
    while (this.ready.length > 0 && this.deps.freeSlots() > 0) {
      const { delivery, leasedUntil } = this.ready.shift()!;
      if (leasedUntil.getTime() - this.deps.clock.now().getTime() >= this.deps.attemptTimeoutMs)
        this.deps.launch(delivery);
      else
        this.deps.logger.warn(
          { deliveryId: delivery.id },
          'a delivery claimed at birth waited out its lease for a slot; it will be claimed again',
        );
    }
  }

  /**
   * Takes no more deliveries, and forgets those waiting to start, as a worker that stopped or crashed
   * would: their leases run out and they are claimed again.
   */
  close(): void {
    this.closed = true;
    this.ready.length = 0;
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
        if (this.closed) return;
        for (const delivery of deliveries)
          this.ready.push({ delivery, leasedUntil, destination: destinationOf(delivery.subscription.target_url) });
        this.startReady();
      },
      settled: release,
    };
  }
}
