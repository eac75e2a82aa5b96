/**
 * The attempts a delivery worker has started and not yet recorded, and the slots they hold. An attempt
 * holds one of the worker's slots while its request is under way and gives it back when the request has
 * ended, while fewer outcomes than slots wait to be recorded: a slot bounds the requests to receivers, not
 * the database's pace. Past that many, it gives its slot back once its outcome is recorded.
 */
import type { Logger } from 'pino';
import { destinationOf } from './fair-claim.js';
import type { ClaimedDelivery } from './types.js';

interface InFlightAttempt {
  promise: Promise<void>;
  abort: AbortController;
  tenantId: string;
  destination: string;
  /** Whether it still holds one of the worker's slots. */
  sending: boolean;
}

export interface InFlightAttemptsDeps {
  /** The worker's slots (the shared and the express ones). */
  slots: number;
  logger: Logger;
  /** Called each time an attempt gives its slot back. */
  onSlotFree: () => void;
}

/**
 * Runs one attempt: its request (cut off by `signal`), `requestEnded()`, then the record of its outcome.
 * Resolves once the outcome is recorded.
 */
export type AttemptRun = (signal: AbortSignal, requestEnded: () => void) => Promise<void>;

export class InFlightAttempts {
  private readonly attempts = new Map<string, InFlightAttempt>();
  private holding = 0;

  constructor(private readonly deps: InFlightAttemptsDeps) {}

  /** The attempts not yet recorded. */
  get size(): number {
    return this.attempts.size;
  }

  /** The attempts holding a slot. */
  get sending(): number {
    return this.holding;
  }

  /** Each attempt holding a slot, to its tenant's destination. */
  *holdingSlots(): Iterable<{ tenantId: string; destination: string }> {
    for (const attempt of this.attempts.values()) if (attempt.sending) yield attempt;
  }

  /** Settles when each attempt not yet recorded is. */
  settled(): Promise<unknown> {
    return Promise.all([...this.attempts.values()].map((attempt) => attempt.promise));
  }

  /** Cuts every request off (a worker that crashes, in tests). */
  abortAll(): void {
    for (const attempt of this.attempts.values()) attempt.abort.abort();
  }

  start(delivery: ClaimedDelivery, run: AttemptRun): void {
    const attempt: InFlightAttempt = {
      promise: Promise.resolve(),
      abort: new AbortController(),
      tenantId: delivery.tenant_id,
      destination: destinationOf(delivery.subscription.target_url),
      sending: true,
    };
    this.attempts.set(delivery.id, attempt);
    this.holding++;
    const requestEnded = () => {
      if (this.attempts.size - this.holding < this.deps.slots) this.free(attempt);
    };
    attempt.promise = run(attempt.abort.signal, requestEnded)
      .catch((error) =>
        this.deps.logger.error({ err: error, deliveryId: delivery.id }, 'webhook delivery bookkeeping failed'),
      )
      .finally(() => {
        this.attempts.delete(delivery.id);
        this.free(attempt);
      });
  }

  private free(attempt: InFlightAttempt): void {
    if (!attempt.sending) return;
    attempt.sending = false;
    this.holding--;
    this.deps.onSlotFree();
  }
}
