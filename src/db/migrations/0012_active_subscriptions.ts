import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Hostile-tenant probe: an event's deliveries are written for the tenant's active subscriptions, in their
 * order (outbox/repository/events.ts), and the only index was on every subscription of the tenant. A closed
 * sandbox listener keeps its (inactive) subscription row, and a tenant can open and close listeners as fast
 * as the rate limit allows, so every event of that tenant read more rows as it went; its creates share a
 * batch's transaction with other tenants'. Indexed on the active ones only, in the order the deliveries
 * take, an event reads only what it delivers to.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create index webhook_subscriptions_active_seq on webhook_subscriptions (tenant_id, seq) where is_active;
  `,
  );
}
