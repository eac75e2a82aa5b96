/**
 * The delivery queue (an event's deliveries are queued with it: events.ts): the sweep of leases that ran
 * out with no attempt left. These serve the worker, which works across tenants.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema.js';

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
