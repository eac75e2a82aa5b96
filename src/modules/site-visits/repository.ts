/** Site visits and their asset assignments. Every function takes the tenant: another tenant's visit is not found. */
import type { Transaction } from 'kysely';
import type { Database, SiteVisitRow, SiteVisitUpdate } from '../../db/schema.js';
import { touchVersionedRow, updatedAtNotBefore } from '../../db/versioned-rows.js';
import {
  type CompanionWrites,
  type InsertGuard,
  insertSingleRow,
  type SingleRowInsert,
} from '../../db/single-row-insert.js';
import { tenantRowReads } from '../../db/tenant-row-reads.js';
import { newIntegerId } from '../../lib/ids.js';
import type { Executor } from '../../db/executor.js';

/** A visit with what its representation needs from the rows it refers to. */
export interface VisitRecord extends SiteVisitRow {
  site_code: string;
  project_id_is_integer: boolean;
  item_name: string;
}

/** A visit as its create knows it, before the database numbers it (`seq`, which only pages read). */
export type NewVisitRecord = Omit<VisitRecord, 'seq'>;

/** The unique constraint a second visit with the same ticket number of the tenant runs into. */
export const TICKET_CONSTRAINT = 'site_visits_tenant_ticket';

/** An assigned asset: the assignment and the site asset's fields. */
export interface AssignedAssetRow {
  id: number;
  visit_id: string;
  site_asset_id: number;
  unique_id: string;
  friendly_location: string;
  asset_status: string;
  asset_display: string;
}

function visitRecords(db: Executor, tenantId: string) {
  return allVisitRecords(db).where('v.tenant_id', '=', tenantId);
}

/** Every tenant's visits with their references' fields: only ever narrowed to tenants (above, and `readVisit`). */
function allVisitRecords(db: Executor) {
  return db
    .selectFrom('site_visits as v')
    .innerJoin('sites as s', 's.id', 'v.site_id')
    .innerJoin('projects as p', (join) =>
      join.onRef('p.tenant_id', '=', 'v.tenant_id').onRef('p.project_id', '=', 'v.project_id'),
    )
    .innerJoin('items as i', (join) =>
      join.onRef('i.tenant_id', '=', 'v.tenant_id').onRef('i.item_id', '=', 'v.item_id'),
    )
    .selectAll('v')
    .select(['s.site_code', 'p.project_id_is_integer', 'i.item_name']);
}

export async function findVisit(db: Executor, tenantId: string, id: string): Promise<VisitRecord | undefined> {
  return visitRecords(db, tenantId).where('v.id', '=', id).executeTakeFirst();
}

/** The tenant's visit by id: outside a transaction gathered with the turn's other reads into one statement, inside one `findVisit`. */
export const readVisit = tenantRowReads<VisitRecord>(
  (db, ids, tenantIds) =>
    // Not marked `prepared()`: its columns are `v.*`, whose result type a migration would change under it.
    allVisitRecords(db).where('v.id', '=', ids).where('v.tenant_id', '=', tenantIds),
  findVisit,
);

/** One page in creation order after `afterSeq`, optionally one ticket number only; callers ask one extra row. */
export async function listVisits(
  db: Executor,
  tenantId: string,
  clientTicketNumber: string | undefined,
  afterSeq: number | undefined,
  limit: number,
): Promise<VisitRecord[]> {
  let query = visitRecords(db, tenantId);
  if (clientTicketNumber !== undefined) query = query.where('v.client_ticket_number', '=', clientTicketNumber);
  if (afterSeq !== undefined) query = query.where('v.seq', '>', afterSeq);
  return query.orderBy('v.seq').limit(limit).execute();
}

/** The tenant's latest visits, newest first (the operator's view). */
export async function listLatestVisits(db: Executor, tenantId: string, limit: number): Promise<VisitRecord[]> {
  return visitRecords(db, tenantId).orderBy('v.seq', 'desc').limit(limit).execute();
}

export async function visitExists(db: Executor, tenantId: string, id: string): Promise<boolean> {
  return (
    (await db
      .selectFrom('site_visits')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()) !== undefined
  );
}

/**
 * The tenant a visit belongs to, whatever the tenant: for the operator API, which names visits by id
 * alone. Everything after this lookup goes through the tenant-scoped functions.
 */
export async function findVisitTenantId(db: Executor, visitId: string): Promise<string | undefined> {
  const row = await db.selectFrom('site_visits').select('tenant_id').where('id', '=', visitId).executeTakeFirst();
  return row?.tenant_id;
}

export async function findVisitIdByTicket(
  db: Executor,
  tenantId: string,
  clientTicketNumber: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('site_visits')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('client_ticket_number', '=', clientTicketNumber)
    .executeTakeFirst();
  return row?.id;
}

/** The insert of a new visit, every column set, with the writes that go with it (its event) and its guard. */
export function visitInsert(
  row: Omit<SiteVisitRow, 'seq'>,
  companions?: CompanionWrites,
  guard?: InsertGuard,
): SingleRowInsert {
  return {
    table: 'site_visits',
    row,
    uniqueConstraint: TICKET_CONSTRAINT,
    ...(companions ? { companions } : {}),
    ...(guard ? { guard } : {}),
  };
}

/** Inserts the visit; false when the tenant has a visit with its ticket number already. */
export async function insertVisit(tx: Transaction<Database>, row: Omit<SiteVisitRow, 'seq'>): Promise<boolean> {
  return (await insertSingleRow(tx, row.tenant_id, visitInsert(row))).created;
}

/** The visit, locked until the transaction ends, so that a concurrent update waits and then re-reads. */
export async function findVisitForUpdate(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<SiteVisitRow | undefined> {
  return tx
    .selectFrom('site_visits')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** Applies `changes` and adds 1 to the version. */
export async function updateVisit(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
  changes: SiteVisitUpdate,
): Promise<boolean> {
  const result = await tx
    .updateTable('site_visits')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Records a new return-label version on the visit (`touchVersionedRow`). */
export function touchVisit(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
  now: Date,
): Promise<Date | undefined> {
  return touchVersionedRow(tx, 'site_visits', tenantId, id, now);
}

/** How many visits the site has (what a change of its code rewrites). */
export async function countVisitsOfSite(tx: Transaction<Database>, tenantId: string, siteId: string): Promise<number> {
  const row = await tx
    .selectFrom('site_visits')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Adds 1 to the version of every visit of the site (its representation changed with the site's code), and
 * moves its updatedAt to `now` unless the visit's last change is later (`notBefore`).
 */
export async function bumpVisitsOfSite(
  tx: Transaction<Database>,
  tenantId: string,
  siteId: string,
  now: Date,
): Promise<void> {
  await tx
    .updateTable('site_visits')
    .set((eb) => ({ version: eb('version', '+', 1), updated_at: updatedAtNotBefore(now) }))
    .where('tenant_id', '=', tenantId)
    .where('site_id', '=', siteId)
    .execute();
}

/** The assets assigned to each of the visits, in assignment order. */
export async function listAssignedAssets(
  db: Executor,
  tenantId: string,
  visitIds: readonly string[],
): Promise<AssignedAssetRow[]> {
  if (visitIds.length === 0) return [];
  return db
    .selectFrom('site_visit_assets as a')
    .innerJoin('site_assets as sa', 'sa.id', 'a.site_asset_id')
    .select([
      'a.id',
      'a.visit_id',
      'a.site_asset_id',
      'sa.unique_id',
      'sa.friendly_location',
      'sa.asset_status',
      'sa.asset_display',
    ])
    .where('a.tenant_id', '=', tenantId)
    .where('a.visit_id', 'in', visitIds)
    .orderBy('a.seq')
    .execute();
}

export async function listAssignedAssetIds(db: Executor, tenantId: string, visitId: string): Promise<number[]> {
  const rows = await db
    .selectFrom('site_visit_assets')
    .select('site_asset_id')
    .where('tenant_id', '=', tenantId)
    .where('visit_id', '=', visitId)
    .orderBy('seq')
    .execute();
  return rows.map((row) => row.site_asset_id);
}

/**
 * Assigns the site assets, in order. Assignment ids are random integers (like site-asset ids); an id
 * that happens to be taken is skipped by the insert and drawn again, without aborting the transaction.
 */
export async function insertAssignments(
  tx: Transaction<Database>,
  tenantId: string,
  visitId: string,
  siteAssetIds: readonly number[],
  now: Date,
): Promise<void> {
  let remaining = [...siteAssetIds];
  for (let attempt = 0; remaining.length > 0; attempt++) {
    if (attempt === 5) throw new Error('could not draw free site-visit asset ids');
    const inserted = await tx
      .insertInto('site_visit_assets')
      .values(
        remaining.map((siteAssetId) => ({
          id: newIntegerId(),
          tenant_id: tenantId,
          visit_id: visitId,
          site_asset_id: siteAssetId,
          created_at: now,
        })),
      )
      .onConflict((conflict) => conflict.column('id').doNothing())
      .returning('site_asset_id')
      .execute();
    const done = new Set(inserted.map((row) => row.site_asset_id));
    remaining = remaining.filter((id) => !done.has(id));
  }
}

export async function deleteAssignments(
  tx: Transaction<Database>,
  tenantId: string,
  visitId: string,
  siteAssetIds: readonly number[],
): Promise<void> {
  if (siteAssetIds.length === 0) return;
  await tx
    .deleteFrom('site_visit_assets')
    .where('tenant_id', '=', tenantId)
    .where('visit_id', '=', visitId)
    .where('site_asset_id', 'in', siteAssetIds)
    .execute();
}
