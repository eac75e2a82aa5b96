import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Issue 19: every foreign key is a check, and a row lock, at each insert (a visit's create wrote eight).
 * Two of them said nothing the others did not, and one pair says more as one key:
 * - a visit's own key to its tenant: its (tenant, project) and (tenant, item) keys already name a project
 *   and an item of that tenant, each a row whose tenant exists (their own keys to tenants);
 * - a delivery's keys to its tenant and to its target become one key to the target of that tenant: the
 *   target must exist, as before, and now belong to the delivery's tenant (which exists, the target's own
 *   key says so), a tenancy rule the database did not check until now.
 * Adding the key checks every stored delivery against it (a scan of webhook_deliveries), inside the
 * migrations' transaction, while writes to the table wait (docs/deployment.md, "Upgrade note: 0010").
 * Rows the old release writes satisfy it: it may run before a rolling upgrade.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    alter table site_visits drop constraint site_visits_tenant_id_fkey;

    alter table webhook_subscriptions add constraint webhook_subscriptions_tenant_target unique (tenant_id, id);
    alter table webhook_deliveries
      add constraint webhook_deliveries_tenant_target foreign key (tenant_id, subscription_id)
        references webhook_subscriptions (tenant_id, id),
      drop constraint webhook_deliveries_tenant_id_fkey,
      drop constraint webhook_deliveries_subscription_id_fkey;
  `,
  );
}
