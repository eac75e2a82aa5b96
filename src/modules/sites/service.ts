/** Site rules (SPEC: Site, Sites endpoint rules): creation, partial update, lookups and listing. */
import type { Kysely, Transaction } from 'kysely';
import { notBefore } from '../../lib/clock.js';
import type { Database, SiteRow, SiteUpdate } from '../../db/schema.js';
import { changedColumns, type ColumnsOf, suppliedColumns } from '../../db/column-changes.js';
import { refusingDuplicate } from '../../db/errors.js';
import { assertIfMatch } from '../../http/concurrency.js';
import { isoTime, resourceObject, type ResourceObject } from '../../http/envelope.js';
import type { SingleRowCreate } from '../../http/idempotency.js';
import { type CursorCodec, filteredListName, type ListingPage, readListingPage } from '../../http/pagination.js';
import { DuplicateResource } from '../../http/duplicate-resource.js';
import { notFound, notFoundById, validationProblem } from '../../http/problem.js';
import { valueOrWhy } from '../../http/request-names.js';
import { newId } from '../../lib/ids.js';
import * as repository from './repository.js';
import type { SiteAttributesValue, SiteCreate, SiteListQueryValue, SitePatch } from './schemas.js';

export const SITE_TYPE = 'sites';

/** API field → column, for every writable field. */
const COLUMNS = {
  name: 'name',
  siteCode: 'site_code',
  addressLine1: 'address_line1',
  addressLine2: 'address_line2',
  city: 'city',
  stateRegion: 'state_region',
  postalCode: 'postal_code',
  country: 'country',
  uniqueID: 'unique_id',
  uniqueID2: 'unique_id2',
  friendlyLocationName: 'friendly_location_name',
  friendlyLocationName2: 'friendly_location_name2',
  keyRequired: 'key_required',
} as const satisfies Record<keyof SiteCreate, keyof SiteRow> & ColumnsOf<SitePatch, SiteRow>;

export function toSiteResource(row: Omit<SiteRow, 'seq'>): ResourceObject<SiteAttributesValue> {
  return resourceObject(
    SITE_TYPE,
    row.id,
    {
      clientId: row.tenant_id,
      status: row.status,
      createdAt: isoTime(row.created_at),
      updatedAt: isoTime(row.updated_at),
      name: row.name,
      siteCode: row.site_code,
      addressLine1: row.address_line1,
      addressLine2: row.address_line2,
      city: row.city,
      stateRegion: row.state_region,
      postalCode: row.postal_code,
      country: row.country,
      uniqueID: row.unique_id,
      uniqueID2: row.unique_id2,
      friendlyLocationName: row.friendly_location_name,
      friendlyLocationName2: row.friendly_location_name2,
      keyRequired: row.key_required,
    },
    row.version,
  );
}

/** The 409 of a siteCode the tenant has already: it names that site, found by `existing` or by its code. */
function duplicateSiteCode(tenantId: string, siteCode: string, existing?: SiteRow): DuplicateResource {
  return new DuplicateResource(
    `A site with siteCode ${valueOrWhy(siteCode, 'as sent', true)} already exists for your client.`,
    existing
      ? { type: SITE_TYPE, id: existing.id }
      : async (db) => {
          const site = await repository.findSiteByCode(db, tenantId, siteCode);
          return site && { type: SITE_TYPE, id: site.id };
        },
  );
}

/**
 * The new site's row with every column set, also those the database would default, so that its response
 * is known before it is inserted (`SingleRowCreate`).
 */
function newSiteRow(tenantId: string, input: SiteCreate, now: Date): Omit<SiteRow, 'seq'> {
  return {
    id: newId('site'),
    tenant_id: tenantId,
    site_code: input.siteCode,
    name: input.name,
    address_line1: input.addressLine1,
    address_line2: input.addressLine2 ?? null,
    city: input.city,
    state_region: input.stateRegion,
    postal_code: input.postalCode,
    country: input.country,
    unique_id: input.uniqueID ?? null,
    unique_id2: input.uniqueID2 ?? null,
    friendly_location_name: input.friendlyLocationName ?? null,
    friendly_location_name2: input.friendlyLocationName2 ?? null,
    key_required: input.keyRequired ?? null,
    status: 'Active',
    version: 1,
    created_at: now,
    updated_at: now,
  };
}

/** The create of a site as one insert; the unique constraint decides a duplicate siteCode, also between racing creates. */
export function siteCreation(tenantId: string, input: SiteCreate, now: Date): SingleRowCreate {
  const row = newSiteRow(tenantId, input, now);
  return {
    insert: repository.siteInsert(row),
    duplicate: () => duplicateSiteCode(tenantId, input.siteCode),
    resource: toSiteResource(row),
  };
}

/** Creates a site without an Idempotency-Key (the sandbox's demo data; the API goes through `createResource`). */
export async function createSite(
  tx: Transaction<Database>,
  tenantId: string,
  input: SiteCreate,
  now: Date,
): Promise<void> {
  if (!(await repository.insertSite(tx, newSiteRow(tenantId, input, now))))
    throw duplicateSiteCode(tenantId, input.siteCode);
}

/** The tenant's site (404 otherwise); outside a transaction the read joins the turn's batch (`readSite`). */
export async function getSite(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<SiteRow> {
  const site = await repository.readSite(db, tenantId, id);
  if (!site) throw notFoundById('Site', id);
  return site;
}

/** The tenant's site's version (404 when the tenant has no such site). */
export async function siteVersion(db: Kysely<Database>, tenantId: string, id: string): Promise<number> {
  const site = await repository.readSiteVersion(db, tenantId, id);
  if (!site) throw notFoundById('Site', id);
  return site.version;
}

/** The tenant's site with this siteCode (404 otherwise), for the modules that name a site by its code. */
export async function getSiteByCode(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  siteCode: string,
): Promise<SiteRow> {
  return siteWithCode(siteCode, await repository.findSiteByCode(db, tenantId, siteCode));
}

/** `site`, the tenant's site with this siteCode if any; 404 when there is none. */
export function siteWithCode<S>(siteCode: string, site: S | undefined): S {
  if (!site) throw notFound(`Site with siteCode ${valueOrWhy(siteCode, 'as sent', true)}`);
  return site;
}

/**
 * What else changes with a site's code, in the same transaction: the resources that show it (the visits of
 * the site, whose module depends on this one and hands this in through the composition root).
 */
export type SiteCodeFollower = (
  tx: Transaction<Database>,
  tenantId: string,
  siteId: string,
  now: Date,
) => Promise<void>;

/**
 * Applies the supplied fields. The version grows by one only when a stored value actually changes;
 * a patch that changes nothing answers the current representation. A new siteCode is handed to
 * `codeFollowers` in the same transaction.
 */
export async function patchSite(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
  patch: SitePatch,
  ifMatch: string | undefined,
  now: Date,
  codeFollowers: readonly SiteCodeFollower[] = [],
): Promise<SiteRow> {
  const site = await repository.findSiteForUpdate(tx, tenantId, id);
  if (!site) throw notFoundById('Site', id);
  assertIfMatch(ifMatch, site.version);

  const changes: SiteUpdate = changedColumns(site, suppliedColumns(COLUMNS, patch));
  if (Object.keys(changes).length === 0) return site;
  const at = notBefore(now, site.updated_at);
  const holder =
    changes.site_code === undefined
      ? undefined
      : await repository.findSiteByCode(tx, tenantId, changes.site_code as string);
  if (holder) throw duplicateSiteCode(tenantId, holder.site_code, holder);
  const updated = await refusingDuplicate(
    () => repository.updateSite(tx, tenantId, id, { ...changes, updated_at: at }),
    () => duplicateSiteCode(tenantId, String(changes.site_code)),
    repository.SITE_CODE_CONSTRAINT,
  );
  if (changes.site_code !== undefined) for (const follow of codeFollowers) await follow(tx, tenantId, id, at);
  return updated;
}

/** A page of the tenant's sites: their ids and versions, which `RenderedResources` turns into the page. */
export async function listSites(
  db: Kysely<Database>,
  cursors: CursorCodec,
  tenantId: string,
  query: SiteListQueryValue,
): Promise<ListingPage> {
  const filters = (['siteCode', 'uniqueID', 'uniqueID2'] as const).filter((name) => query[name] !== undefined);
  if (filters.length > 1) {
    throw validationProblem(
      Object.fromEntries(filters.map((name) => [name, ['only one of siteCode, uniqueID and uniqueID2 may be given']])),
      'Filter by one identifier at a time: siteCode, uniqueID or uniqueID2.',
    );
  }
  const name = filters[0];
  const filter: repository.SiteFilter = name ? { column: COLUMNS[name], value: query[name]! } : undefined;
  const list = filteredListName(SITE_TYPE, name ? { name, value: query[name]! } : undefined);
  return readListingPage(cursors, list, tenantId, query, (after, limit) =>
    repository.listSites(db, tenantId, filter, after, limit),
  );
}

/** The tenant's sites with these ids (a list page's rows not rendered before), in no particular order. */
export function findSites(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<SiteRow[]> {
  return repository.findSites(db, tenantId, ids);
}

/** Whether the site is still the tenant's (idempotent replays check this). */
export async function siteExists(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  return (await repository.findSite(db, tenantId, id)) !== undefined;
}
