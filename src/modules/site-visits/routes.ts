/** The four site-visit endpoints (SPEC: Endpoints, Site visits). */
import { Type } from 'typebox';
import { transaction } from '../../db/transaction.js';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../app-context.js';
import type { Database } from '../../db/schema.js';
import { IfMatchHeader } from '../../http/concurrency.js';
import { sendResource, serializeResource } from '../../http/envelope.js';
import { createdHeaders, etagHeaders } from '../../http/headers.js';
import {
  createResource,
  IdempotencyKeyHeader,
  KEYED_CREATE_CONFLICTS,
  sendCreateOutcome,
} from '../../http/idempotency.js';
import { chunkedPageBody } from '../../http/page-body.js';
import { listPageEnd, sendRenderedList } from '../../http/rendered-resources.js';
import { IdParams, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import type { AuthContext } from '../../http/auth.js';
import { KnownReferences } from './known-references.js';
import { loadVisitViews, SITE_VISIT_TYPE, toVisitResource } from './representation.js';
import { type VisitRecord, visitExists } from './repository.js';
import {
  SiteVisitCreateBody,
  SiteVisitDocument,
  SiteVisitList,
  SiteVisitListQuery,
  SiteVisitPatchBody,
  SiteVisitResource,
} from './schemas.js';
import * as visits from './service.js';
import { VISIT_REFERENCE_CONFLICTS } from './visit-fields.js';

const tags = ['Site visits'];

/** assetsToService and siteVisitAssets are shown only to tokens with site-visits:read (DECISIONS). */
function mayReadAssets(auth: AuthContext): boolean {
  return auth.scopes.has('site-visits:read');
}

/** A replayed create was answered to whatever token sent it first: hide what this token may not read. */
function withoutAssetAttributes(body: unknown): unknown {
  const document = body as { data: { attributes: Record<string, unknown> } };
  const { assetsToService: _summary, siteVisitAssets: _assets, ...attributes } = document.data.attributes;
  return { ...document, data: { ...document.data, attributes } };
}

export function registerSiteVisitRoutes(app: Api, ctx: AppContext): void {
  const { db, clock, cursors } = ctx;
  const baseUrl = ctx.config.publicBaseUrl;
  /** What this app's visit creates found of their references (visitCreation). */
  const knownReferences = new KnownReferences();

  const render = async (
    executor: Kysely<Database> | Transaction<Database>,
    auth: AuthContext,
    records: readonly VisitRecord[],
  ) =>
    (await loadVisitViews(executor, auth.tenantId, records, mayReadAssets(auth))).map((view) =>
      toVisitResource(view, baseUrl),
    );

  app.get(
    '/api/v1/site-visits',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'listSiteVisits',
        summary: 'List site visits',
        description:
          'Cursor-paginated, oldest first. With clientTicketNumber: the visit carrying your ticket reference, if any, in the same list form.',
        tags,
        querystring: SiteVisitListQuery,
        response: { 200: SiteVisitList, ...problemResponses([401, 403, 422, 429]) },
      },
    },
    async (request, reply) => {
      const page = await visits.listVisits(db, cursors, request.auth.tenantId, request.query);
      // Rendered a chunk at a time, so that a page cut at PAGE_BYTES reads no assets or label of a row it leaves out.
      const body = await chunkedPageBody(
        page.items,
        async (chunk) =>
          (await render(db, request.auth, chunk)).map((resource, at) => ({
            json: Buffer.from(serializeResource(reply, SiteVisitResource, resource)),
            seq: chunk[at]!.seq,
          })),
        listPageEnd(page),
      );
      return sendRenderedList(reply, body);
    },
  );

  app.post(
    '/api/v1/site-visits',
    {
      config: { scope: 'site-visits:write' },
      schema: {
        operationId: 'createSiteVisit',
        summary: 'Create a site visit',
        description: 'Status New; emits ticket.created. siteAssetIds must be site assets of the clientSiteId site.',
        tags,
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        body: SiteVisitCreateBody,
        response: {
          201: { ...SiteVisitDocument, headers: createdHeaders },
          ...problemResponses(
            [401, 403, 404, 409, 422, 429],
            {
              404: 'clientSiteId or itemName is not one of yours.',
              409: 'invalid-project, invalid-site-asset, duplicate clientTicketNumber (duplicate-resource: `existing` names the visit that has it), or an Idempotency-Key conflict or pending request.',
            },
            {},
            { 409: [...VISIT_REFERENCE_CONFLICTS, ...KEYED_CREATE_CONFLICTS] },
          ),
        },
      },
    },
    async (request, reply) => {
      const outcome = await createResource(
        db,
        clock,
        request,
        { resourceType: SITE_VISIT_TYPE, exists: visitExists },
        visits.visitCreation(
          knownReferences,
          request.auth.tenantId,
          request.body,
          clock.now(),
          { includeAssets: mayReadAssets(request.auth), resource: (view) => toVisitResource(view, baseUrl) },
          request.log,
        ),
      );
      if (outcome.replayed && !mayReadAssets(request.auth)) outcome.body = withoutAssetAttributes(outcome.body);
      return sendCreateOutcome(reply, outcome);
    },
  );

  app.get(
    '/api/v1/site-visits/:id',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'getSiteVisit',
        summary: 'Get a site visit',
        tags,
        params: IdParams,
        querystring: NoQuery,
        response: { 200: { ...SiteVisitDocument, headers: etagHeaders }, ...problemResponses([401, 403, 404, 429]) },
      },
    },
    async (request, reply) => {
      const record = await visits.getVisit(db, request.auth.tenantId, request.params.id);
      const [resource] = await render(db, request.auth, [record]);
      return sendResource(reply, 200, resource!);
    },
  );

  app.patch(
    '/api/v1/site-visits/:id',
    {
      config: { scope: 'site-visits:write' },
      schema: {
        operationId: 'updateSiteVisit',
        summary: 'Update a site visit',
        description:
          'Only supplied fields change; siteAssetIds omitted leaves the assignment, [] clears it. Moving the visit to another site while assets of the old one are assigned needs new siteAssetIds in the same request. With If-Match, a stale ETag is 409 version-conflict.',
        tags,
        params: IdParams,
        headers: Type.Object({ 'if-match': IfMatchHeader }),
        body: SiteVisitPatchBody,
        response: {
          200: { ...SiteVisitDocument, headers: etagHeaders },
          ...problemResponses(
            [401, 403, 404, 409, 422, 429],
            {
              404: 'The visit, or the clientSiteId or itemName, is not one of yours.',
              409: 'invalid-project, invalid-site-asset, site-asset-conflict, duplicate clientTicketNumber (duplicate-resource: `existing` names the visit that has it), or If-Match does not match (version-conflict).',
            },
            {},
            { 409: [...VISIT_REFERENCE_CONFLICTS, 'site-asset-conflict', 'version-conflict'] },
          ),
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.auth;
      const resource = await transaction(db, tenantId, async (tx) => {
        const record = await visits.patchVisit(
          tx,
          tenantId,
          request.params.id,
          request.body,
          request.headers['if-match'],
          clock.now(),
        );
        return (await render(tx, request.auth, [record]))[0]!;
      });
      return sendResource(reply, 200, resource);
    },
  );
}
