import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Issue 15 item 3: one tenant's webhooks cannot starve another's.
 * - The cap on a tenant's active subscriptions, stored on every tenant (16 for the tenants that exist
 *   now and by default for new ones; the operator changes it per tenant). Stored rather than null-means-
 *   default so that the tenant's representation always shows the cap that applies.
 * - The pending deliveries by subscription: the fair claim walks the subscriptions that have pending
 *   deliveries (a loose index scan) and takes the earliest due of each, instead of the earliest due overall.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    alter table tenants
      add column max_active_subscriptions integer not null default 16
        constraint tenants_max_active_subscriptions check (max_active_subscriptions >= 1);
    create index webhook_deliveries_pending_subscription on webhook_deliveries (subscription_id, next_attempt_at)
      where status = 'pending';
  `,
  );
}
