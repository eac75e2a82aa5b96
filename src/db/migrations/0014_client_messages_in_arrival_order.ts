import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * The operator's inbox: `GET /admin/v1/messages` lists the clients' messages (recordOwner `Client API`) of every
 * tenant in arrival order, newest first in the console. The messages' indexes all lead with the tenant, so across
 * tenants a page would read every message and sort them; in `seq` order, a page reads its rows and the one after,
 * from either end.
 *
 * Partial on purpose: a plain index on `seq` is a second way to read one tenant's messages in `seq` order
 * (walking every tenant's and keeping the tenant's), which the planner may prefer to messages_tenant_seq when the
 * tenant's rows are scattered through the table, and which reads the whole table for a tenant with few messages.
 * The client's lists (and the inbox filtered by tenant) never state the predicate, so they cannot choose this
 * one. `if not exists`: a large database may have built it concurrently beforehand (docs/deployment.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create index if not exists messages_client_arrival on messages (seq) where record_owner = 'Client API';
  `,
  );
}
