/** The four site endpoints (SPEC: Endpoints, Sites). */
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { transaction } from '../../db/transaction.js';
import { IfMatchHeader } from '../../http/concurrency.js';
import { serializeResource } from '../../http/envelope.js';
import { sendRenderedList, sendRenderedResource } from '../../http/rendered-resources.js';
import {
  createResource,
  IdempotencyKeyHeader,
  KEYED_CREATE_CONFLICTS,
  sendCreateOutcome,
} from '../../http/idempotency.js';
import { IdParams, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { etagHeaders, createdHeaders } from '../../http/headers.js';
import { SiteCreateBody, SiteDocument, SiteList, SiteListQuery, SitePatchBody, SiteResource } from './schemas.js';
import * as sites from './service.js';

const tags = ['Sites'];

/** `codeFollowers`: what changes with a site's code (sites.patchSite), handed in by the composition root. */
export function registerSiteRoutes(app: Api, ctx: AppContext, codeFollowers: readonly sites.SiteCodeFollower[]): void {
  const { db, clock, cursors, rendered } = ctx;

  app.get(
    '/api/v1/sites',
    {
      config: { scope: 'sites:read' },
      schema: {
        operationId: 'listSites',
        summary: 'List sites',
        description:
          'Cursor-paginated, oldest first. Filter by exactly one of siteCode, uniqueID or uniqueID2 to resolve a client-side identifier to a site.',
        tags,
        querystring: SiteListQuery,
        response: { 200: SiteList, ...problemResponses([401, 403, 422, 429]) },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.auth;
      const page = await sites.listSites(db, cursors, tenantId, request.query);
      const body = await rendered.list(
        sites.SITE_TYPE,
        tenantId,
        page,
        async (ids) => (await sites.findSites(db, tenantId, ids)).map(sites.toSiteResource),
        (site) => serializeResource(reply, SiteResource, site),
      );
      return sendRenderedList(reply, body);
    },
  );

  app.post(
    '/api/v1/sites',
    {
      config: { scope: 'sites:write' },
      schema: {
        operationId: 'createSite',
        summary: 'Create a site',
        tags,
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        body: SiteCreateBody,
        response: {
          201: { ...SiteDocument, headers: createdHeaders },
          ...problemResponses(
            [401, 403, 409, 422, 429],
            {
              409: 'Duplicate siteCode for your client (duplicate-resource: `existing` names the site that has it), or an Idempotency-Key conflict or pending request.',
            },
            {},
            { 409: ['duplicate-resource', ...KEYED_CREATE_CONFLICTS] },
          ),
        },
      },
    },
    async (request, reply) => {
      const creation = sites.siteCreation(request.auth.tenantId, request.body, clock.now());
      const outcome = await createResource(
        db,
        clock,
        request,
        { resourceType: sites.SITE_TYPE, exists: sites.siteExists },
        creation,
      );
      return sendCreateOutcome(reply, outcome);
    },
  );

  app.get(
    '/api/v1/sites/:id',
    {
      config: { scope: 'sites:read' },
      schema: {
        operationId: 'getSite',
        summary: 'Get a site',
        tags,
        params: IdParams,
        querystring: NoQuery,
        response: { 200: { ...SiteDocument, headers: etagHeaders }, ...problemResponses([401, 403, 404, 429]) },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.auth;
      const { id } = request.params;
      const site = await rendered.one(
        sites.SITE_TYPE,
        tenantId,
        id,
        () => sites.siteVersion(db, tenantId, id),
        async () => sites.toSiteResource(await sites.getSite(db, tenantId, id)),
        (resource) => serializeResource(reply, SiteResource, resource),
      );
      return sendRenderedResource(reply, site);
    },
  );

  app.patch(
    '/api/v1/sites/:id',
    {
      config: { scope: 'sites:write' },
      schema: {
        operationId: 'updateSite',
        summary: 'Update a site',
        description:
          'Only supplied fields change. With If-Match, a stale ETag is refused with 409 version-conflict. A new siteCode ' +
          "is a new version of each visit of the site: a client's siteCode changes may rewrite " +
          `${ctx.config.siteCodeVisitRewritesPerMinute} visits in any one minute (a change is admitted while the minute ` +
          'holds fewer, so any one site can be renamed), past that 429 with Retry-After and nothing changes.',
        tags,
        params: IdParams,
        headers: Type.Object({ 'if-match': IfMatchHeader }),
        body: SitePatchBody,
        response: {
          200: { ...SiteDocument, headers: etagHeaders },
          ...problemResponses(
            [401, 403, 404, 409, 422, 429],
            {
              409: 'Duplicate siteCode (duplicate-resource: `existing` names the site that has it), or If-Match does not match (version-conflict).',
              429: "Rate limit exceeded, or your client's siteCode changes rewrote too many visits in the last minute; wait Retry-After seconds.",
            },
            {},
            { 409: ['duplicate-resource', 'version-conflict'] },
          ),
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.auth;
      const site = await transaction(db, tenantId, (tx) =>
        sites.patchSite(
          tx,
          tenantId,
          request.params.id,
          request.body,
          request.headers['if-match'],
          clock.now(),
          codeFollowers,
        ),
      );
      const kept = rendered.keep(sites.SITE_TYPE, tenantId, sites.toSiteResource(site), (resource) =>
        serializeResource(reply, SiteResource, resource),
      );
      return sendRenderedResource(reply, kept);
    },
  );
}
