/**
 * Each attempt's mark on its target's health record: a success ends the failure streak, a failure extends
 * it and may deactivate a subscription that has failed for WEBHOOK_AUTO_DISABLE_AFTER (repository/attempts.ts).
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import * as attempts from './repository/attempts.js';

export interface SubscriptionHealthDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  autoDisableAfterMs: number;
}

export class SubscriptionHealth {
  /** When this process last recorded a success per subscription: a healthy subscription is written at most once a second. */
  private readonly healthyWrittenAt = new Map<string, number>();

  constructor(private readonly deps: SubscriptionHealthDeps) {}

  /** Never throws: a health record that cannot be written is logged, and the delivery goes on. */
  async record(subscriptionId: string, success: boolean, error: string): Promise<void> {
    const now = this.deps.clock.now();
    if (success) {
      const written = this.healthyWrittenAt.get(subscriptionId);
      if (written !== undefined && now.getTime() - written < 1_000) return;
      this.healthyWrittenAt.set(subscriptionId, now.getTime());
      if (this.healthyWrittenAt.size > 10_000) this.healthyWrittenAt.clear();
    } else {
      this.healthyWrittenAt.delete(subscriptionId);
    }
    try {
      if (success) await attempts.recordSubscriptionSuccess(this.deps.db, subscriptionId, now);
      else if (
        await attempts.recordSubscriptionFailure(this.deps.db, subscriptionId, now, error, this.deps.autoDisableAfterMs)
      ) {
        this.deps.logger.warn(
          { subscriptionId },
          'webhook subscription deactivated after failing for WEBHOOK_AUTO_DISABLE_AFTER',
        );
      }
    } catch (failure) {
      this.deps.logger.warn({ err: failure, subscriptionId }, 'webhook subscription health not recorded');
    }
  }
}
