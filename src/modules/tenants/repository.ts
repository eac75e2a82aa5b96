/** Tenants: the client companies, with their scopes and feature flags. */
import { type Selectable, sql, type Transaction, type Updateable } from 'kysely';
import type { Database, TenantsTable } from '../../db/schema.js';
import type { Executor } from '../../db/executor.js';
import { BYTES_PER_MIB } from './schemas.js';

export type TenantRow = Selectable<TenantsTable>;

export async function insertTenant(
  tx: Executor,
  tenant: {
    id: string;
    name: string;
    scopes: string[];
    apiEnabled: boolean;
    webhookAccess: boolean;
    maxActiveSubscriptions: number;
    storageLimitMiB: number;
    now: Date;
  },
): Promise<TenantRow> {
  return tx
    .insertInto('tenants')
    .values({
      id: tenant.id,
      name: tenant.name,
      scopes: tenant.scopes,
      api_enabled: tenant.apiEnabled,
      webhook_access: tenant.webhookAccess,
      max_active_subscriptions: tenant.maxActiveSubscriptions,
      storage_limit_mib: tenant.storageLimitMiB,
      created_at: tenant.now,
      updated_at: tenant.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findTenant(db: Executor, id: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Reads the tenant and locks its row until the transaction ends: writes that must see the tenant's
 * other rows as they are (the cap on active subscriptions) take this lock first and so run one at a time.
 */
export async function lockTenant(tx: Transaction<Database>, id: string): Promise<TenantRow | undefined> {
  return tx.selectFrom('tenants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function updateTenant(
  tx: Executor,
  id: string,
  changes: Updateable<TenantsTable>,
): Promise<TenantRow | undefined> {
  return tx.updateTable('tenants').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function listTenants(db: Executor): Promise<TenantRow[]> {
  return db.selectFrom('tenants').selectAll().orderBy('seq').execute();
}

export async function countTenants(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('tenants')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Adds a new file version's bytes to what the tenant's files hold, unless that would pass its storage limit:
 * one statement, whose row lock makes concurrent uploads of the tenant add one after the other, each judged on
 * what the one before left. Whether it was added (false also for an unknown tenant).
 */
export async function addStorageUse(tx: Transaction<Database>, id: string, bytes: number): Promise<boolean> {
  const added = await tx
    .updateTable('tenants')
    .set({ storage_used_bytes: sql`storage_used_bytes + ${bytes}` })
    .where('id', '=', id)
    .where(sql<boolean>`storage_used_bytes + ${bytes} <= storage_limit_mib::bigint * ${BYTES_PER_MIB}`)
    .returning('id')
    .executeTakeFirst();
  return added !== undefined;
}
