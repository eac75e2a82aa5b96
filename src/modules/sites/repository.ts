/** Sites in the database. Every function takes the tenant: another tenant's site is simply not found. */
import type { Transaction } from 'kysely';
import { prepared } from '../../db/prepared-statements.js';
import type { Executor } from '../../db/executor.js';
import type { Database, SiteRow, SiteUpdate } from '../../db/schema.js';
import { readListing } from '../../db/listing.js';
import { insertSingleRow, type SingleRowInsert } from '../../db/single-row-insert.js';
import { tenantRowReads, tenantVersionReads } from '../../db/tenant-row-reads.js';

/** The unique constraint a second site with the same siteCode of the tenant runs into. */
export const SITE_CODE_CONSTRAINT = 'sites_tenant_site_code';

/** The insert of a new site, every column set (the idempotent create runs it in one statement with its key). */
export function siteInsert(row: Omit<SiteRow, 'seq'>): SingleRowInsert {
  return { table: 'sites', row, uniqueConstraint: SITE_CODE_CONSTRAINT };
}

/** Inserts the site; false when the tenant has a site with its siteCode already. */
export async function insertSite(db: Executor, row: Omit<SiteRow, 'seq'>): Promise<boolean> {
  return (await insertSingleRow(db, row.tenant_id, siteInsert(row))).created;
}

/** Every column, named: the prepared statements below keep their result type when a migration adds a column. */
const SITE_COLUMNS = [
  'id',
  'tenant_id',
  'seq',
  'site_code',
  'name',
  'address_line1',
  'address_line2',
  'city',
  'state_region',
  'postal_code',
  'country',
  'unique_id',
  'unique_id2',
  'friendly_location_name',
  'friendly_location_name2',
  'key_required',
  'status',
  'version',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SiteRow)[];

export async function findSite(db: Executor, tenantId: string, id: string): Promise<SiteRow | undefined> {
  return db
    .selectFrom('sites')
    .select(SITE_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .modifyEnd(prepared())
    .executeTakeFirst();
}

/** The tenant's site by id: outside a transaction gathered with the turn's other reads into one statement, inside one `findSite`. */
export const readSite = tenantRowReads<SiteRow>(
  (db, ids, tenantIds) =>
    db
      .selectFrom('sites')
      .select(SITE_COLUMNS)
      .where('id', '=', ids)
      .where('tenant_id', '=', tenantIds)
      .modifyEnd(prepared()),
  findSite,
);

/** The tenant's site's version by id, batched as `readSite`. */
export const readSiteVersion = tenantVersionReads('sites');

/** The site, locked until the transaction ends, so that a concurrent update waits and then re-reads. */
export async function findSiteForUpdate(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<SiteRow | undefined> {
  return tx
    .selectFrom('sites')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function findSiteByCode(db: Executor, tenantId: string, siteCode: string): Promise<SiteRow | undefined> {
  return db
    .selectFrom('sites')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('site_code', '=', siteCode)
    .executeTakeFirst();
}

export async function updateSite(tx: Executor, tenantId: string, id: string, changes: SiteUpdate): Promise<SiteRow> {
  return tx
    .updateTable('sites')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type SiteFilter = { column: 'site_code' | 'unique_id' | 'unique_id2'; value: string } | undefined;

/** One page in creation order, after `afterSeq`: its listing (`readListing`) of `limit` rows at least (callers ask one extra). */
export async function listSites(
  db: Executor,
  tenantId: string,
  filter: SiteFilter,
  afterSeq: number | undefined,
  limit: number,
): Promise<string> {
  let query = db.selectFrom('sites').select(['id', 'version', 'seq']).where('tenant_id', '=', tenantId);
  if (filter) query = query.where(filter.column, '=', filter.value);
  if (afterSeq !== undefined) query = query.where('seq', '>', afterSeq);
  return readListing(db, tenantId, query.orderBy('seq'), limit);
}

/** The tenant's sites with these ids, in no particular order. */
export async function findSites(db: Executor, tenantId: string, ids: readonly string[]): Promise<SiteRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('sites').select(SITE_COLUMNS).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}
