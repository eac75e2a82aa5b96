/**
 * The delivery queue: queuing an event's deliveries in its transaction, and the sweep of leases that ran
 * out with no attempt left. These serve the worker, which works across tenants.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database, EventRow } from '../../../db/schema.js';
import { newId } from '../../../lib/ids.js';
import { notifyWorkers } from '../wake-workers.js';

/**
 * Queues one delivery per active subscription of the tenant whose eventTypes contain the event's type,
 * in the caller's transaction, and wakes the workers when it commits. Lifecycle events other than
 * ticket.created are queued only while the tenant has both webhookAccess and apiEnabled on.
 */
export async function enqueueDeliveries(
  tx: Transaction<Database>,
  tenantId: string,
  event: EventRow,
  now: Date,
): Promise<number> {
  let query = tx
    .selectFrom('webhook_subscriptions as s')
    .innerJoin('tenants as t', 't.id', 's.tenant_id')
    .select('s.id')
    .where('s.tenant_id', '=', tenantId)
    .where('s.is_active', '=', true)
    .where(sql<boolean>`${event.type} = any(s.event_types)`);
  if (event.type !== 'ticket.created')
    query = query.where('t.webhook_access', '=', true).where('t.api_enabled', '=', true);
  const subscriptions = await query.orderBy('s.seq').execute();
  if (subscriptions.length === 0) return 0;
  await tx
    .insertInto('webhook_deliveries')
    .values(
      subscriptions.map((subscription) => ({
        id: newId('dlv'),
        tenant_id: tenantId,
        event_id: event.id,
        event_type: event.type,
        subscription_id: subscription.id,
        status: 'pending' as const,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  await notifyWorkers(tx);
  return subscriptions.length;
}

/**
 * Which tenants' deliveries a worker serves: all of them (undefined), or only those listed, read at every
 * claim. Deployments leave it unset; tests that share one database with other test files set it.
 */
export type TenantScope = ReadonlySet<string> | undefined;

export function inScope(column: ReturnType<typeof sql.ref>, scope: TenantScope) {
  return scope === undefined ? sql<boolean>`true` : sql<boolean>`${column} = any(${[...scope]}::text[])`;
}

const LOST_ATTEMPT_ERROR = "no outcome recorded: the worker's lease expired";

/** The attempt-log entry of an attempt whose worker never reported back, built from the row in SQL. */
export const lostAttemptEntry = sql`jsonb_build_array(jsonb_build_object(
  'attempt', d.attempts,
  'at', to_char(d.claimed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'statusCode', null, 'error', ${LOST_ATTEMPT_ERROR}::text, 'durationMs', null))`;

/**
 * Fails, terminally, deliveries whose worker died during the last attempt of their budget: the lease ran
 * out and no attempt is left. Returns their subscription ids (for the health record).
 */
export async function failExhaustedLeases(
  db: Kysely<Database>,
  now: Date,
  maxAttempts: number,
  scope: TenantScope,
): Promise<string[]> {
  const result = await sql<{ subscription_id: string }>`
    update webhook_deliveries d set
      status = 'failed',
      attempt_log = d.attempt_log || ${lostAttemptEntry},
      last_error = ${LOST_ATTEMPT_ERROR}::text,
      leased_until = null,
      completed_at = ${now},
      updated_at = ${now}
    where d.status = 'pending' and d.next_attempt_at <= ${now} and d.leased_until is not null
      and d.attempts - d.round_start >= ${maxAttempts}
      and ${inScope(sql.ref('d.tenant_id'), scope)}
    returning d.subscription_id
  `.execute(db);
  return result.rows.map((row) => row.subscription_id);
}
