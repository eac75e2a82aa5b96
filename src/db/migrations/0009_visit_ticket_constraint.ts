import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * Issue 19: a visit's create is one statement (the visit, its event and the event's deliveries), whose
 * insert skips a duplicate ticket number with `on conflict on constraint`, which names a constraint, not an
 * index. The partial unique index on (tenant, ticket number) becomes a unique constraint of the same name
 * and the same meaning: nulls are distinct in a unique constraint, so any number of visits may still have
 * no ticket number.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    drop index site_visits_tenant_ticket;
    alter table site_visits
      add constraint site_visits_tenant_ticket unique (tenant_id, client_ticket_number);
  `,
  );
}
