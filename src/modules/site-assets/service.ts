/** Provisioning site assets (operator API). */
import type { Kysely, Transaction } from 'kysely';
import type { Database, SiteAssetRow, SiteRow } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import { Problem } from '../../http/problem.js';
import { valueOrWhy } from '../../http/request-names.js';
import { newIntegerId } from '../../lib/ids.js';
import { getSiteByCode } from '../sites/service.js';
import * as repository from './repository.js';
import type { SiteAssetCreate, SiteAssetValue } from './schemas.js';

export function toSiteAsset(row: SiteAssetRow, siteCode: string): SiteAssetValue {
  return {
    siteAssetId: row.id,
    siteCode,
    uniqueId: row.unique_id,
    friendlyLocation: row.friendly_location,
    assetStatus: row.asset_status,
    assetDisplay: row.asset_display,
  };
}

export async function createSiteAsset(
  db: Kysely<Database>,
  tenantId: string,
  input: SiteAssetCreate,
  now: Date,
): Promise<SiteAssetValue> {
  const site = await getSiteByCode(db, tenantId, input.siteCode);
  // Random integer ids; retry on the (rare) collision with an existing one.
  for (let attempt = 0; ; attempt++) {
    try {
      const row = await repository.insertSiteAsset(db, {
        id: newIntegerId(),
        tenant_id: tenantId,
        site_id: site.id,
        unique_id: input.uniqueId,
        friendly_location: input.friendlyLocation,
        asset_status: input.assetStatus,
        asset_display: input.assetDisplay,
        created_at: now,
      });
      return toSiteAsset(row, site.site_code);
    } catch (error) {
      if (attempt < 5 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

export async function listSiteAssets(
  db: Kysely<Database>,
  tenantId: string,
  siteCode: string,
): Promise<SiteAssetValue[]> {
  const site = await getSiteByCode(db, tenantId, siteCode);
  const rows = await repository.listSiteAssetsOfSite(db, tenantId, site.id);
  return rows.map((row) => toSiteAsset(row, site.site_code));
}

/** The ids once each, in the order first given. */
export function distinctIds(ids: readonly number[]): number[] {
  return [...new Set(ids)];
}

/**
 * The most refused ids an invalid-site-asset problem names; the others are counted. A body may hold 200 ids,
 * and naming each (with the site's code) made a 30 KB answer to a request of 2 KB.
 */
const NAMED_INVALID_SITE_ASSETS = 10;

/** 409 invalid-site-asset naming the first of the refused ids and counting the others. */
function invalidSiteAssets(invalid: readonly number[], siteCode: string): Problem {
  const named = invalid.slice(0, NAMED_INVALID_SITE_ASSETS);
  const others = invalid.length - named.length;
  const site = `site ${valueOrWhy(siteCode, 'named by clientSiteId', true)}`;
  const ids = others > 0 ? `${named.join(', ')} and ${others} more` : named.join(', ');
  return new Problem(
    'invalid-site-asset',
    `siteAssetIds ${ids} ${invalid.length === 1 ? 'is not a site asset' : 'are not site assets'} of ${site}.`,
    {
      errors: {
        siteAssetIds: [
          ...named.map((id) => `${id} is not a site asset of ${site}`),
          ...(others > 0 ? [`and ${others} more of the ids sent are not site assets of ${site}`] : []),
        ],
      },
    },
  );
}

/**
 * Checks that every id is a site asset of `site` (unknown ids and other tenants' assets are simply not
 * found, so they are refused alike); returns the distinct ids in the order given.
 */
export async function resolveSiteAssets(
  tx: Transaction<Database>,
  tenantId: string,
  site: Pick<SiteRow, 'id' | 'site_code'>,
  siteAssetIds: readonly number[],
): Promise<number[]> {
  const ids = distinctIds(siteAssetIds);
  const ofSite = new Set(
    (await repository.findSiteAssets(tx, tenantId, ids))
      .filter((asset) => asset.site_id === site.id)
      .map((asset) => asset.id),
  );
  const invalid = ids.filter((id) => !ofSite.has(id));
  if (invalid.length > 0) throw invalidSiteAssets(invalid, site.site_code);
  return ids;
}
