/** Operator API: site assets of a tenant's sites. */
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { DataOf, problemResponses, Text } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { TenantParams } from '../tenants/schemas.js';
import { getTenant } from '../tenants/service.js';
import { SiteAsset, SiteAssetCreateBody } from './schemas.js';
import * as siteAssets from './service.js';

const tags = ['Site assets'];

export function registerSiteAssetAdminRoutes(app: Api, ctx: AppContext): void {
  const { db, clock } = ctx;

  app.post(
    '/admin/v1/tenants/:tenantId/site-assets',
    {
      schema: {
        operationId: 'createSiteAsset',
        summary: "Add a site asset to one of a tenant's sites",
        description: '404 when the tenant has no site with that siteCode.',
        tags,
        params: TenantParams,
        body: SiteAssetCreateBody,
        response: { 201: DataOf(SiteAsset), ...problemResponses([401, 404, 422]) },
      },
    },
    async (request, reply) => {
      await getTenant(db, request.params.tenantId);
      return reply
        .code(201)
        .send({ data: await siteAssets.createSiteAsset(db, request.params.tenantId, request.body, clock.now()) });
    },
  );

  app.get(
    '/admin/v1/tenants/:tenantId/site-assets',
    {
      schema: {
        operationId: 'listSiteAssets',
        summary: 'List the site assets of one site',
        description:
          'The assets installed at the site with the given siteCode, which the client can assign to site visits by siteAssetId.',
        tags,
        params: TenantParams,
        querystring: Type.Object({ siteCode: Text(100) }, { additionalProperties: false }),
        response: { 200: DataOf(Type.Array(SiteAsset)), ...problemResponses([401, 404, 422]) },
      },
    },
    async (request) => {
      await getTenant(db, request.params.tenantId);
      return { data: await siteAssets.listSiteAssets(db, request.params.tenantId, request.query.siteCode) };
    },
  );
}
