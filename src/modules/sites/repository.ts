/** Sites in the database. Every function takes the tenant: another tenant's site is simply not found. */
import { type Kysely, sql, type Transaction } from 'kysely';
import { BatchedLookup } from '../../db/batched-lookup.js';
import { prepared } from '../../db/prepared-statements.js';
import type { Executor } from '../../db/executor.js';
import type { Database, SiteRow, SiteUpdate } from '../../db/schema.js';
import { insertSingleRow, type SingleRowInsert } from '../../db/single-row-insert.js';

/** The unique constraint a second site with the same siteCode of the tenant runs into. */
export const SITE_CODE_CONSTRAINT = 'sites_tenant_site_code';

/** The insert of a new site, every column set (the idempotent create runs it in one statement with its key). */
export function siteInsert(row: Omit<SiteRow, 'seq'>): SingleRowInsert {
  return { table: 'sites', row, uniqueConstraint: SITE_CODE_CONSTRAINT };
}

/** Inserts the site; false when the tenant has a site with its siteCode already. */
export async function insertSite(db: Executor, row: Omit<SiteRow, 'seq'>): Promise<boolean> {
  return (await insertSingleRow(db, siteInsert(row))).created;
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

/**
 * The sites of many (tenant, id) lookups in one statement, compiled once (its text never changes; each
 * batch only binds its two arrays). It may read a site whose id one tenant asked for and another tenant
 * owns (when both tenants are in the batch); `BatchedLookup` answers a lookup only with the row of its
 * own tenant and id, so that site is simply not found.
 */
function sitesOfLookups(db: Kysely<Database>): (lookups: [tenantId: string, id: string][]) => Promise<SiteRow[]> {
  const compiled = db
    .selectFrom('sites')
    .select(SITE_COLUMNS)
    .where('id', '=', sql<string>`any(${[]}::text[])`)
    .where('tenant_id', '=', sql<string>`any(${[]}::text[])`)
    .modifyEnd(prepared())
    .compile();
  return async (lookups) => {
    const ids = lookups.map(([, id]) => id);
    const tenantIds = [...new Set(lookups.map(([tenantId]) => tenantId))];
    // The compiled text's $1 and $2, in the order of the two placeholders above.
    return (await db.executeQuery<SiteRow>({ ...compiled, parameters: [ids, tenantIds] })).rows;
  };
}

const siteLookups = new WeakMap<Kysely<Database>, BatchedLookup<[tenantId: string, id: string], SiteRow>>();

/** `findSite` outside a transaction, gathered with the other requests of this turn into one statement. */
export function readSite(db: Kysely<Database>, tenantId: string, id: string): Promise<SiteRow | undefined> {
  let lookup = siteLookups.get(db);
  if (!lookup) {
    lookup = new BatchedLookup(
      (tenant, site) => `${tenant}\u0000${site}`,
      (row) => `${row.tenant_id}\u0000${row.id}`,
      sitesOfLookups(db),
    );
    siteLookups.set(db, lookup);
  }
  return lookup.find(tenantId, id);
}

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

/** One page in creation order, after `afterSeq`; fetches `limit` rows (callers ask one extra). */
export async function listSites(
  db: Executor,
  tenantId: string,
  filter: SiteFilter,
  afterSeq: number | undefined,
  limit: number,
): Promise<SiteRow[]> {
  let query = db.selectFrom('sites').selectAll().where('tenant_id', '=', tenantId);
  if (filter) query = query.where(filter.column, '=', filter.value);
  if (afterSeq !== undefined) query = query.where('seq', '>', afterSeq);
  return query.orderBy('seq').limit(limit).execute();
}
