/** How committed work wakes the delivery workers (LISTEN/NOTIFY, on PostgreSQL and PGlite alike). */
import { sql } from 'kysely';
import type { Executor } from '../../db/executor.js';

/** The channel on which committed work wakes the delivery workers. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

/** Wakes every listening worker when the surrounding transaction commits. */
export async function notifyWorkers(tx: Executor): Promise<void> {
  await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(tx);
}
