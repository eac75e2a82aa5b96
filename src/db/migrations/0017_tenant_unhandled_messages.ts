import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * `messages_tenant_client_unhandled`: one tenant's clients' messages not yet handled, in arrival order, for the
 * count of one tenant's (`GET /admin/v1/messages/unhandled-count?tenantId=`): an index-only walk of at most
 * COUNT_LIMIT + 1 of the tenant's entries. messages_client_unhandled (migration 0016), on `seq` alone, would walk
 * every tenant's backlog to find one tenant's, a heap fetch each for its tenant: bounded by the backlog, not by the
 * limit, so one tenant's flood of messages would make every other tenant's count read it. A column added to that
 * index could not serve both counts and the inbox: led by tenant_id it loses the arrival order every tenant's
 * unhandled page reads it in; after seq it is still the whole backlog walked. Partial as 0016's, with the same
 * predicate: the backlog only, a handled message costs it nothing but its removal (docs/decisions.md, "A client's
 * change reopens a handled message"). Built as 0016's: on a large table, beforehand and concurrently
 * (docs/deployment.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    create index if not exists messages_tenant_client_unhandled on messages (tenant_id, seq)
      where record_owner = 'Client API' and handled_at is null;
  `,
  );
}
