/**
 * The delivery queue: queuing an event's deliveries in its transaction, and the sweep of leases that ran
 * out with no attempt left. These serve the worker, which works across tenants.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database, EventRow } from '../../../db/schema.js';
import { newId } from '../../../lib/ids.js';
import { notifyWorkers } from '../wake-workers.js';

/** A target the event could go to, with the tenant's settings that decide whether it is published. */
export interface Recipient {
  subscriptionId: string;
  tenant: { webhookAccess: boolean; apiEnabled: boolean };
}

/**
 * The tenant's active targets whose eventTypes contain the type, in creation order, each with the tenant's
 * webhookAccess and apiEnabled read in the same statement (the caller applies the publishing rule).
 */
export async function findRecipients(
  tx: Transaction<Database>,
  tenantId: string,
  eventType: string,
): Promise<Recipient[]> {
  const rows = await tx
    .selectFrom('webhook_subscriptions as s')
    .innerJoin('tenants as t', 't.id', 's.tenant_id')
    .select(['s.id', 't.webhook_access', 't.api_enabled'])
    .where('s.tenant_id', '=', tenantId)
    .where('s.is_active', '=', true)
    .where(sql<boolean>`${eventType} = any(s.event_types)`)
    .orderBy('s.seq')
    .execute();
  return rows.map((row) => ({
    subscriptionId: row.id,
    tenant: { webhookAccess: row.webhook_access, apiEnabled: row.api_enabled },
  }));
}

/**
 * Queues one delivery of the event per target, due now, in the caller's transaction, and wakes the
 * workers when it commits.
 */
export async function insertDeliveries(
  tx: Transaction<Database>,
  tenantId: string,
  event: EventRow,
  subscriptionIds: readonly string[],
  now: Date,
): Promise<void> {
  await tx
    .insertInto('webhook_deliveries')
    .values(
      subscriptionIds.map((subscriptionId) => ({
        id: newId('dlv'),
        tenant_id: tenantId,
        event_id: event.id,
        event_type: event.type,
        subscription_id: subscriptionId,
        status: 'pending' as const,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  await notifyWorkers(tx);
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
export async function failExhaustedLeases(db: Kysely<Database>, now: Date, maxAttempts: number): Promise<string[]> {
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
    returning d.subscription_id
  `.execute(db);
  return result.rows.map((row) => row.subscription_id);
}
