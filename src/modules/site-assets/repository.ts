import type { SiteAssetRow } from '../../db/schema.js';
import type { Executor } from '../../db/executor.js';

export async function insertSiteAsset(
  tx: Executor,
  row: Omit<SiteAssetRow, 'seq' | 'created_at'> & { created_at: Date },
): Promise<SiteAssetRow> {
  return tx.insertInto('site_assets').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The tenant's assets among `ids` (ids of other tenants are silently absent). */
export async function findSiteAssets(db: Executor, tenantId: string, ids: readonly number[]): Promise<SiteAssetRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('site_assets')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .orderBy('seq')
    .execute();
}

export async function listSiteAssetsOfSite(db: Executor, tenantId: string, siteId: string): Promise<SiteAssetRow[]> {
  return db
    .selectFrom('site_assets')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('site_id', '=', siteId)
    .orderBy('seq')
    .execute();
}
