/**
 * The delivery worker's claim rounds (worker.ts): each claims from the queue as many due deliveries as the
 * worker has room for, chosen fairly (claiming.ts, fair-claim.ts), and launches them. One run of rounds at a
 * time: a wake while one runs asks for another round in the same run, not for a second claim alongside
 * (`again`), and so does a race lost to another worker (chosen again among the rest, at most three times).
 * Once per poll interval a round first fails the deliveries whose last attempt's lease ran out. A run ends by
 * setting the worker's wake timer for the next due delivery, or the poll interval.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { WebhookConfig } from '../../config.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { Metrics } from '../../runtime/metrics.js';
import type { AttemptRecorder } from './attempt-recorder.js';
import type { BirthClaims } from './birth-claims.js';
import { claimFairly } from './claiming.js';
import type { InFlight, Slots } from './fair-claim.js';
import type { InFlightAttempts } from './in-flight-attempts.js';
import type { ClaimedDelivery } from './types.js';

export interface ClaimRoundsDeps {
  db: Kysely<Database>;
  config: WebhookConfig;
  clock: Clock;
  logger: Logger;
  metrics?: Metrics;
  slots: Slots;
  attempts: Pick<InFlightAttempts, 'sending'>;
  births: Pick<BirthClaims, 'waitingToStart' | 'startReady'>;
  recorder: Pick<AttemptRecorder, 'failLostLastAttempts'>;
  /** What is in flight on the worker, the deliveries waiting to start and the open birth claims included. */
  inFlight: () => InFlight;
  /** Starts a claimed delivery's attempt. */
  launch: (delivery: ClaimedDelivery) => void;
  /** Whether the worker runs (started, not stopping): only then does a round lead to the next in the same run. */
  running: () => boolean;
  /** Sets the worker's wake timer. */
  schedule: (delayMs: number) => void;
}

export class ClaimRounds {
  private run: Promise<void> | undefined;
  private again = false;
  private lastSweep = 0;
  private waitingTenants: ReadonlySet<string> = new Set();

  constructor(private readonly deps: ClaimRoundsDeps) {}

  /** The run under way, if any. */
  get underWay(): Promise<void> | undefined {
    return this.run;
  }

  /** Whether another round was asked for that the last run did not make (the worker had stopped running). */
  get askedAgain(): boolean {
    return this.again;
  }

  /** The tenants whose due deliveries the last round left waiting. */
  get waiting(): ReadonlySet<string> {
    return this.waitingTenants;
  }

  /** Starts a run now, or asks the run under way for one more round. */
  request(): void {
    if (this.run) {
      this.again = true;
      return;
    }
    this.start();
  }

  /** Starts a run of the caller's own (there is none under way). */
  start(): void {
    this.run = this.rounds().finally(() => {
      this.run = undefined;
    });
  }

  private async rounds(): Promise<void> {
    const { config, clock, slots, attempts, births } = this.deps;
    let delayMs = config.pollIntervalMs;
    let races = 0;
    try {
      do {
        this.again = false;
        const now = clock.now();
        if (now.getTime() - this.lastSweep >= config.pollIntervalMs) {
          this.lastSweep = now.getTime();
          await this.deps.recorder.failLostLastAttempts(now);
        }
        const room = slots.shared + slots.express - attempts.sending - births.waitingToStart;
        if (room <= 0) return;
        const { claimed, lostRace, waiting, nextDueAt } = await claimFairly(this.deps.db, {
          now,
          leaseUntil: new Date(now.getTime() + config.leaseMs),
          maxAttempts: config.maxAttempts,
          room,
          inFlight: this.deps.inFlight(),
          slots,
        });
        for (const delivery of claimed) this.deps.launch(delivery);
        this.deps.metrics?.deliveryClaims.inc({ how: 'queue' }, claimed.length);
        this.waitingTenants = waiting;
        // Nothing waiting any more frees the other half of the shared slots for deliveries claimed at birth.
        births.startReady();
        // Another worker took some of the chosen ones in between: choose again among the rest.
        if (lostRace && ++races <= 3) this.again = true;
        if (nextDueAt) delayMs = Math.min(delayMs, Math.max(0, nextDueAt.getTime() - clock.now().getTime()));
      } while (this.again && this.deps.running() && attempts.sending < slots.shared + slots.express);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'webhook delivery worker could not claim deliveries; retrying');
    } finally {
      this.deps.schedule(delayMs);
    }
  }
}
