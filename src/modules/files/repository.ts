/** File versions: which blob holds each version of an owner's file. Every function takes the tenant. */
import type { Transaction } from 'kysely';
import type { Database, FileVersionRow, ListedFileVersion } from '../../db/schema.js';
import type { Executor } from '../../db/executor.js';

/** How many versions the owner's file has: its latest version number (versions are numbered 1, 2, 3, … and kept). */
export async function countVersions(
  db: Executor,
  tenantId: string,
  ownerType: string,
  ownerId: string,
): Promise<number> {
  const latest = await db
    .selectFrom('file_versions')
    .select(({ fn }) => fn.max('version').as('version'))
    .where('tenant_id', '=', tenantId)
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();
  return latest?.version ?? 0;
}

/**
 * Adds a version, numbered by the caller from countVersions. Callers hold the owner's row lock, so two
 * uploads to one owner are numbered one after the other.
 */
export async function insertVersion(
  tx: Transaction<Database>,
  tenantId: string,
  version: Omit<FileVersionRow, 'tenant_id'>,
): Promise<FileVersionRow> {
  return tx
    .insertInto('file_versions')
    .values({ ...version, tenant_id: tenantId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The versions of each owner's file, oldest first, for several owners at once (lists). */
export async function listVersions(
  db: Executor,
  tenantId: string,
  ownerType: string,
  ownerIds: readonly string[],
): Promise<ListedFileVersion[]> {
  if (ownerIds.length === 0) return [];
  return db
    .selectFrom('file_versions')
    .select(['owner_id', 'version', 'file_name', 'content_type', 'size_bytes', 'uploaded_at'])
    .where('tenant_id', '=', tenantId)
    .where('owner_type', '=', ownerType)
    .where('owner_id', 'in', ownerIds)
    .orderBy('owner_id')
    .orderBy('version')
    .execute();
}

export async function findLatestVersion(
  db: Executor,
  tenantId: string,
  ownerType: string,
  ownerId: string,
): Promise<FileVersionRow | undefined> {
  return db
    .selectFrom('file_versions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}
