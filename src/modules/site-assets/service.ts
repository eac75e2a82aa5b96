/** Provisioning site assets (operator API). */
import type { Kysely } from 'kysely';
import type { Database, SiteAssetRow } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import { notFound } from '../../http/problem.js';
import { newIntegerId } from '../../lib/ids.js';
import { findSiteByCode } from '../sites/repository.js';
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
  const site = await findSiteByCode(db, tenantId, input.siteCode);
  if (!site) throw notFound(`Site with siteCode ${JSON.stringify(input.siteCode)}`);
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
  const site = await findSiteByCode(db, tenantId, siteCode);
  if (!site) throw notFound(`Site with siteCode ${JSON.stringify(siteCode)}`);
  const rows = await repository.listSiteAssetsOfSite(db, tenantId, site.id);
  return rows.map((row) => toSiteAsset(row, site.site_code));
}
