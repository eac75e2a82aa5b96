/**
 * Recording an attempt once its verdict is in: the attempt-log entry and the delivery's outcome (written
 * with the outcomes that end at the same time, in one statement), the metrics, the attempt's log line, and
 * the target's health; and the attempts that never reported, of workers that died during a delivery's last
 * attempt.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { WebhookConfig } from '../../config.js';
import type { Database, DeliveryAttempt } from '../../db/schema.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import type { Metrics } from '../../runtime/metrics.js';
import { type AttemptMade, INACTIVE } from './attempt.js';
import type { ClaimedDelivery } from './types.js';
import * as attempts from './repository/attempts.js';
import { failExhaustedLeases } from './repository/queue.js';
import { outcomeOf } from './retry-schedule.js';
import { SubscriptionHealth } from './subscription-health.js';
import { isoTimeOf } from '../../lib/iso-time.js';

export interface AttemptRecorderDeps {
  db: Kysely<Database>;
  config: WebhookConfig;
  clock: Clock;
  logger: Logger;
  metrics?: Metrics | undefined;
  random: () => number;
}

export class AttemptRecorder {
  private readonly health: SubscriptionHealth;
  /** Outcomes finishing together are written in one statement (while one is written, the next ones gather). */
  private readonly outcomes: Batcher<attempts.AttemptRecord, boolean>;

  constructor(private readonly deps: AttemptRecorderDeps) {
    this.health = new SubscriptionHealth({
      db: deps.db,
      clock: deps.clock,
      logger: deps.logger,
      autoDisableAfterMs: deps.config.autoDisableAfterMs,
    });
    this.outcomes = new Batcher((records) => attempts.recordAttempts(deps.db, records));
  }

  /**
   * Records the attempt; returns when the delivery is due again if it was recorded as pending (undefined
   * when it ended, or when its outcome was dropped because another claim took the delivery over).
   */
  async record(delivery: ClaimedDelivery, attempt: AttemptMade): Promise<Date | undefined> {
    const { config, clock, metrics, random } = this.deps;
    const { verdict, log } = attempt;
    const now = clock.now();
    const entry: DeliveryAttempt = {
      attempt: delivery.attempt,
      at: isoTimeOf(attempt.startedAt),
      statusCode: verdict.statusCode,
      error: verdict.outcome === 'succeeded' ? null : verdict.error,
      durationMs: attempt.durationMs,
    };
    const outcome = outcomeOf(verdict, delivery.attempt - delivery.round_start, config, now, random);

    const recorded = await this.outcomes.add({ deliveryId: delivery.id, entry, outcome, now });
    if (!recorded) {
      log.warn('webhook attempt outcome dropped: the delivery was claimed again after its lease ran out');
      return undefined;
    }
    const counted = outcome.status === 'pending' ? 'retry_scheduled' : outcome.status;
    metrics?.deliveries.inc({ outcome: counted });
    metrics?.deliveryDuration.observe({ outcome: counted }, (entry.durationMs ?? 0) / 1000);
    if (verdict.outcome === 'succeeded') {
      log.info({ statusCode: verdict.statusCode, durationMs: entry.durationMs }, 'webhook delivered');
    } else {
      const next = outcome.status === 'pending' ? outcome.nextAttemptAt.toISOString() : 'none (failed terminally)';
      log.info(
        { statusCode: verdict.statusCode, error: verdict.error, durationMs: entry.durationMs, next },
        'webhook attempt failed',
      );
    }
    // A claim of an inactive subscription sends nothing, so it says nothing about the receiver's health.
    if (verdict.outcome === 'succeeded' || verdict.error !== INACTIVE)
      await this.health.record(delivery.subscription.id, verdict.outcome === 'succeeded', entry.error ?? '');
    return outcome.status === 'pending' ? outcome.nextAttemptAt : undefined;
  }

  /**
   * Fails, terminally, the deliveries whose worker died during the last attempt of their budget (the lease
   * ran out, no attempt is left), and marks each failure on its target's health.
   */
  async failLostLastAttempts(now: Date): Promise<void> {
    const exhausted = await failExhaustedLeases(this.deps.db, now, this.deps.config.maxAttempts);
    for (const subscriptionId of exhausted)
      await this.health.record(subscriptionId, false, "no outcome recorded: the worker's lease expired");
  }
}
