/**
 * Recording attempts: each attempt's outcome on its delivery, and on its target's health record (the
 * failure streak, and the automatic deactivation of a subscription failing for too long).
 */
import { type Kysely, sql } from 'kysely';
import type { Executor } from '../../../db/executor.js';
import { jsonb } from '../../../db/json.js';
import { plannedEachTime } from '../../../db/prepared-statements.js';
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
 * Records attempt outcomes, many in one statement, each fenced on its attempt number: when a lease ran
 * out and another worker claimed the delivery again (or the operator changed it), that row is left alone.
 * Returns, per record in order, whether it was written.
 */
export async function recordAttempts(db: Kysely<Database>, records: readonly AttemptRecord[]): Promise<boolean[]> {
  if (records.length === 0) return [];
  const rows = records.map((record) => ({
    id: record.deliveryId,
    attempt: record.entry.attempt,
    status: record.outcome.status,
    entry: [record.entry],
    error: record.entry.error,
    next_attempt_at: record.outcome.status === 'pending' ? record.outcome.nextAttemptAt.toISOString() : null,
    now: record.now.toISOString(),
  }));
  // The rows are read by primary key alone and fenced once locked, planned at each execution (see
  // claimDeliveries for why).
  const result = await runInTurnBatch(
    db,
    sql<{ id: string }>`
    with current as materialized (
      select d.id, d.attempts, d.status, d.leased_until from webhook_deliveries d
      where d.id = any(${rows.map((row) => row.id)}::text[])
      for update
    )
    update webhook_deliveries d set
      status = v.status,
      attempt_log = d.attempt_log || v.entry,
      last_error = v.error,
      leased_until = null,
      next_attempt_at = coalesce(v.next_attempt_at, d.next_attempt_at),
      completed_at = case when v.status = 'pending' then null else v.now end,
      updated_at = v.now
    from jsonb_to_recordset(${jsonb(rows)}) as v(id text, attempt integer, status text, entry jsonb, error text, next_attempt_at timestamptz, now timestamptz),
      current
    where d.id = v.id and current.id = v.id
      and current.attempts = v.attempt and current.status = 'pending' and current.leased_until is not null
    returning d.id ${plannedEachTime()}`,
  );
  const written = new Set(result.map((row) => row.id));
  return records.map((record) => written.has(record.deliveryId));
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
