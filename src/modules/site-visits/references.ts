/**
 * What a visit refers to, resolved for one tenant (SPEC: Site visits endpoint rules 1-3, Site-asset
 * rules): the site by siteCode (404), the project (409 invalid-project when unknown, foreign or not
 * Active), the item by name (404), and the site assets (409 invalid-site-asset naming the offenders).
 */
import type { Transaction } from 'kysely';
import type { Database, ItemRow, ProjectRow, SiteRow } from '../../db/schema.js';
import { notFound, Problem } from '../../http/problem.js';
import { findItemByName, findProject } from '../reference/repository.js';
import { referenceIdText } from '../reference/service.js';
import { findSiteAssets } from '../site-assets/repository.js';
import { findSiteByCode } from '../sites/repository.js';

export async function resolveSite(tx: Transaction<Database>, tenantId: string, siteCode: string): Promise<SiteRow> {
  const site = await findSiteByCode(tx, tenantId, siteCode);
  if (!site) throw notFound(`Site with siteCode ${JSON.stringify(siteCode)}`);
  return site;
}

export async function resolveProject(
  tx: Transaction<Database>,
  tenantId: string,
  projectId: string | number,
): Promise<ProjectRow> {
  const project = await findProject(tx, tenantId, referenceIdText(projectId));
  if (!project || project.status !== 'Active') {
    throw new Problem(
      'invalid-project',
      project
        ? `Project ${JSON.stringify(projectId)} is not Active. GET /api/v1/projects lists the projects you can use.`
        : `Project ${JSON.stringify(projectId)} is not one of your projects. GET /api/v1/projects lists the projects you can use.`,
      { errors: { projectId: [project ? 'is not an Active project' : 'is not one of your projects'] } },
    );
  }
  return project;
}

export async function resolveItem(tx: Transaction<Database>, tenantId: string, itemName: string): Promise<ItemRow> {
  const item = await findItemByName(tx, tenantId, itemName);
  if (!item) throw notFound(`Item ${JSON.stringify(itemName)}`);
  return item;
}

/** The ids once each, in the order first given. */
export function distinctIds(ids: readonly number[]): number[] {
  return [...new Set(ids)];
}

/**
 * Checks that every id is a site asset of `site` (unknown ids and other tenants' assets are simply not
 * found, so they are refused alike); returns the distinct ids in the order given.
 */
export async function resolveSiteAssets(
  tx: Transaction<Database>,
  tenantId: string,
  site: SiteRow,
  siteAssetIds: readonly number[],
): Promise<number[]> {
  const ids = distinctIds(siteAssetIds);
  const ofSite = new Set(
    (await findSiteAssets(tx, tenantId, ids)).filter((asset) => asset.site_id === site.id).map((asset) => asset.id),
  );
  const invalid = ids.filter((id) => !ofSite.has(id));
  if (invalid.length > 0) {
    throw new Problem(
      'invalid-site-asset',
      `siteAssetIds ${invalid.join(', ')} ${invalid.length === 1 ? 'is not a site asset' : 'are not site assets'} of site ${JSON.stringify(site.site_code)}.`,
      {
        errors: {
          siteAssetIds: invalid.map((id) => `${id} is not a site asset of site ${JSON.stringify(site.site_code)}`),
        },
      },
    );
  }
  return ids;
}
