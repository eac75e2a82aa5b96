/**
 * Recording attempts: each attempt's outcome on its delivery, and on its target's health record (the
 * failure streak, and the automatic deactivation of a subscription failing for too long).
 */
import { type Kysely, sql } from 'kysely';
import type { Executor } from '../../../db/executor.js';
import { jsonb } from '../../../db/json.js';
import { prepared } from '../../../db/prepared-statements.js';
import type { Database, DeliveryAttempt } from '../../../db/schema.js';
import { runInTurnBatch } from '../../../db/turn-batches.js';
import { SUBSCRIPTIONS_ONLY } from '../targets.js';

export type AttemptOutcome =
  | { status: 'succeeded' }
  | { status: 'failed' }
  | { status: 'pending'; nextAttemptAt: Date };

/** One attempt's outcome, to be recorded with others in one statement. */
export interface AttemptRecord {
  deliveryId: string;
  entry: DeliveryAttempt;
  outcome: AttemptOutcome;
  now: Date;
}

/**
 * Records attempt outcomes, a statement each, sent together (one round trip, one commit: `runInTurnBatch`),
 * each fenced on its attempt number: when a lease ran out and another worker claimed the delivery again (or
 * the operator changed it), that row is left alone. Returns, per record in order, whether it was written.
 *
 * A plain update by primary key: a concurrent writer's change makes it wait and then check the fence on
 * the row as that writer left it (PostgreSQL re-evaluates the WHERE on the newest version), so no lock is
 * taken first (a FOR UPDATE before the update cost a WAL record and about a sixth of the statement,
 * bench/results/history.md, session 11). The fence's `status is not distinct from 'pending'` is equality
 * on a column that is never null, written so that it does not imply the partial indexes' `status =
 * 'pending'`: the planner then cannot read one of them (which hold an entry for every version of every
 * row claimed since the last vacuum) instead of the primary key. One row per statement keeps the prepared
 * statement's generic plan on the primary key however small the queue was when it was made; a statement
 * for many ids (`= any(...)`) got a whole-table scan then, and planning it at every execution instead cost
 * as much as running it (bench/results/history.md, session 8).
 */
export async function recordAttempts(db: Kysely<Database>, records: readonly AttemptRecord[]): Promise<boolean[]> {
  // The worker's statements: no tenant's share of connections (db/tenant-shares.ts).
  return Promise.all(
    records.map(async (record) => (await runInTurnBatch(db, recordStatement(record), undefined)).length > 0),
  );
}

/** One outcome's statement (exported for its plan's test). */
export function recordStatement({ deliveryId, entry, outcome, now }: AttemptRecord) {
  const nextAttemptAt = outcome.status === 'pending' ? outcome.nextAttemptAt : null;
  return sql<{ id: string }>`
    update webhook_deliveries d set
      status = ${outcome.status},
      attempt_log = d.attempt_log || ${jsonb([entry])},
      last_error = ${entry.error},
      leased_until = null,
      next_attempt_at = coalesce(${nextAttemptAt}::timestamptz, d.next_attempt_at),
      completed_at = ${outcome.status === 'pending' ? null : now}::timestamptz,
      updated_at = ${now}
    where d.id = ${deliveryId}
      and d.attempts = ${entry.attempt} and d.status is not distinct from 'pending' and d.leased_until is not null
    returning d.id ${prepared()}`;
}

/** A successful attempt: the failure streak ends. Written at most once a second per subscription while healthy. */
export async function recordSubscriptionSuccess(db: Executor, id: string, now: Date): Promise<void> {
  const aSecondAgo = new Date(now.getTime() - 1_000);
  await db
    .updateTable('webhook_subscriptions')
    .set({ consecutive_failures: 0, failing_since: null, last_success_at: now })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('consecutive_failures', '>', 0),
        eb('last_success_at', 'is', null),
        eb('last_success_at', '<', aSecondAgo),
      ]),
    )
    .execute();
}

/**
 * A failed attempt extends the failure streak. With `disableAfterMs` > 0, a subscription that has been
 * failing for at least that long, without a success in between, is deactivated and the reason kept.
 */
export async function recordSubscriptionFailure(
  db: Executor,
  id: string,
  now: Date,
  error: string,
  disableAfterMs: number,
): Promise<boolean> {
  const cutoff = new Date(now.getTime() - disableAfterMs);
  const disable = sql<boolean>`(${disableAfterMs > 0} and is_active and coalesce(failing_since, ${now}) <= ${cutoff})`;
  const reason = `deactivated by the service after failing without a success since %s (WEBHOOK_AUTO_DISABLE_AFTER)`;
  const row = await db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({
      consecutive_failures: eb('consecutive_failures', '+', 1),
      failing_since: sql`coalesce(failing_since, ${now})`,
      last_failure_at: now,
      last_error: error,
      is_active: sql`case when ${disable} then false else is_active end`,
      deactivated_reason: sql`case when ${disable} then replace(${reason}, '%s', to_char(coalesce(failing_since, ${now}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) else deactivated_reason end`,
      updated_at: sql`case when ${disable} then ${now} else updated_at end`,
    }))
    .where('id', '=', id)
    // A listener lives as long as its stream (and grace), never deactivated for failing.
    .where(SUBSCRIPTIONS_ONLY)
    // True only for the update that deactivated it (updated_at moves only then).
    .returning(sql<boolean>`(not is_active and deactivated_reason is not null and updated_at = ${now})`.as('disabled'))
    .executeTakeFirst();
  return row?.disabled ?? false;
}
