import type { Kysely } from 'kysely';
import { runScript } from './sql-script.js';

/**
 * A tenant's stored files are bounded (a hostile-tenant probe: every version of every file is kept, up to
 * 10 MiB each, on any number of visits and messages, so only the rate limit bounded the disk a tenant could
 * fill). `storage_limit_mib` is the operator's setting per tenant; `storage_used_bytes` counts the bytes of the
 * tenant's file versions, added in the transaction that adds a version by one conditional update of the
 * tenant's row, so that the limit holds under concurrent uploads without summing every version at each upload.
 * Existing versions are counted here, inside the migrations' transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    alter table tenants
      add column storage_limit_mib integer not null default 10240
        check (storage_limit_mib between 10 and 10485760),
      add column storage_used_bytes bigint not null default 0 check (storage_used_bytes >= 0);

    update tenants set storage_used_bytes = used.bytes
      from (select tenant_id, sum(size_bytes) as bytes from file_versions group by tenant_id) as used
      where used.tenant_id = tenants.id;
  `,
  );
}
