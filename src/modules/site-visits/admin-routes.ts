/**
 * Operator API: visits created outside the client API, the operator's view of a visit, and the workflow
 * actions that move it on (an exact contract: see issue 5). Visits are named by id across tenants.
 */
import { Type } from 'typebox';
import { transaction } from '../../db/transaction.js';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../app-context.js';
import type { Database } from '../../db/schema.js';
import { sendResource, serializeResource } from '../../http/envelope.js';
import { chunkedPageBody } from '../../http/page-body.js';
import { sendRenderedList } from '../../http/rendered-resources.js';
import { etagHeaders } from '../../http/headers.js';
import { BinaryResponse } from '../../http/media.js';
import { NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { TenantParams } from '../tenants/schemas.js';
import { getTenant } from '../tenants/service.js';
import { DownloadHeaders } from '../files/schemas.js';
import { sendLatestFile } from '../files/service.js';
import { loadVisitViews, toOperatorVisitResource } from './representation.js';
import { listLatestVisits, type NewVisitRecord } from './repository.js';
import { returnLabelOwner } from './return-label.js';
import { SiteVisitCreateBody } from './schemas.js';
import {
  OperatorSiteVisitDocument,
  OperatorSiteVisitResource,
  OperatorVisitParams,
  type WorkflowAction,
  WorkflowActionBody,
} from './workflow-schemas.js';
import * as visits from './service.js';
import { VISIT_REFERENCE_CONFLICTS } from './visit-fields.js';
import { performWorkflowAction } from './workflow.js';

const tags = ['Site visits'];

const visitResponse = { ...OperatorSiteVisitDocument, headers: etagHeaders };

const LatestQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'At most this many visits.' }),
    ),
  },
  { additionalProperties: false },
);

const LatestVisits = Type.Object(
  {
    data: Type.Array(OperatorSiteVisitResource),
    meta: Type.Optional(
      Type.Object(
        {
          omitted: Type.Integer({
            minimum: 1,
            description:
              'How many of the `limit` newest visits are not in `data` because the answer stops at 1 MiB: the oldest of them.',
          }),
        },
        { additionalProperties: false, description: 'Only when visits were left out at 1 MiB.' },
      ),
    ),
  },
  { additionalProperties: false },
);

export function registerSiteVisitAdminRoutes(app: Api, ctx: AppContext): void {
  const { db, clock } = ctx;
  const baseUrl = ctx.config.publicBaseUrl;

  /** The operator sees every attribute, assets included. */
  const render = async (executor: Kysely<Database> | Transaction<Database>, record: NewVisitRecord) =>
    toOperatorVisitResource((await loadVisitViews(executor, record.tenant_id, [record], true))[0]!, baseUrl);

  app.post(
    '/admin/v1/tenants/:tenantId/site-visits',
    {
      schema: {
        operationId: 'createTenantSiteVisit',
        summary: 'Create a site visit for a tenant, outside the client API',
        description:
          "The client create body, with the same validation and reference rules as POST /api/v1/site-visits. The visit gets its visit_ id and status New, and its one ticket.created event is published to the tenant's matching subscriptions.",
        tags,
        params: TenantParams,
        body: SiteVisitCreateBody,
        response: {
          201: visitResponse,
          ...problemResponses(
            [401, 404, 409, 422],
            {
              404: 'The tenant, or the clientSiteId or itemName of the body, was not found.',
              409: 'invalid-project, invalid-site-asset or a duplicate clientTicketNumber (duplicate-resource: `existing` names the visit that has it).',
            },
            {},
            { 409: VISIT_REFERENCE_CONFLICTS },
          ),
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      // The operator's: no tenant's share of connections.
      const resource = await transaction(db, undefined, async (tx) => {
        await getTenant(tx, tenantId);
        return render(tx, await visits.createVisit(tx, tenantId, request.body, clock.now(), request.log));
      });
      return sendResource(reply, 201, resource);
    },
  );

  app.get(
    '/admin/v1/tenants/:tenantId/site-visits',
    {
      schema: {
        operationId: 'listTenantSiteVisits',
        summary: "List a tenant's latest site visits with their workflow state",
        description:
          'Newest first, at most `limit` (default 50, at most 200), and at most 1 MiB of visits (the first visit whatever its size), as a page of the client API stops. When that leaves visits out, `meta.omitted` says how many of the `limit` newest were left out (the oldest of them); without `meta` none was.',
        tags,
        params: TenantParams,
        querystring: LatestQuery,
        response: { 200: LatestVisits, ...problemResponses([401, 404, 422]) },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      await getTenant(db, tenantId);
      const records = await listLatestVisits(db, tenantId, request.query.limit ?? 50);
      // A chunk at a time, so that the visits left out at 1 MiB cost no read of their assets and labels.
      const body = await chunkedPageBody(
        records,
        async (chunk) =>
          (await loadVisitViews(db, tenantId, chunk, true)).map((view, at) => ({
            json: Buffer.from(
              serializeResource(reply, OperatorSiteVisitResource, toOperatorVisitResource(view, baseUrl)),
            ),
            seq: chunk[at]!.seq,
          })),
        { whole: () => undefined, cut: (_lastSeq, omitted) => ({ omitted }) },
      );
      return sendRenderedList(reply, body);
    },
  );

  app.get(
    '/admin/v1/site-visits/:visitId',
    {
      schema: {
        operationId: 'getTenantSiteVisit',
        summary: 'Get a site visit with its workflow state',
        description:
          "The visit as the client sees it plus the workflow's own fields: field rep, schedule, dispatch, completion with its quality review, and the last deliverables transmission (when, and the notes sent to the client).",
        tags,
        params: OperatorVisitParams,
        querystring: NoQuery,
        response: { 200: visitResponse, ...problemResponses([401, 404]) },
      },
    },
    async (request, reply) =>
      sendResource(reply, 200, await render(db, await visits.getVisitOfAnyTenant(db, request.params.visitId))),
  );

  // The visit's returnLabel.url in the operator's view: the client API's download answers the operator
  // token 401, and the operator is the one who ships the parts back with the label.
  app.get(
    '/admin/v1/site-visits/:visitId/return-label',
    {
      schema: {
        operationId: 'downloadTenantSiteVisitReturnLabel',
        summary: "Download a site visit's return label",
        description:
          'The latest version the client uploaded, as application/pdf, with Content-Disposition naming the file. 404 before the first upload.',
        tags,
        params: OperatorVisitParams,
        querystring: NoQuery,
        response: {
          200: BinaryResponse(['application/pdf'], 'The latest version of the return label.', DownloadHeaders),
          ...problemResponses([401, 404]),
        },
      },
    },
    async (request, reply) => {
      const visit = await visits.getVisitOfAnyTenant(db, request.params.visitId);
      const deps = { db, files: ctx.files, clock };
      return sendLatestFile(deps, request, reply, returnLabelOwner, visit.id, visit.tenant_id);
    },
  );

  app.post(
    '/admin/v1/site-visits/:visitId/workflow',
    {
      schema: {
        operationId: 'performSiteVisitWorkflowAction',
        summary: 'Perform one workflow action on a site visit',
        description: [
          'One action per request, named by `action`; each action takes exactly its own members.',
          '',
          '| action | allowed when the visit is | effect | event |',
          '|---|---|---|---|',
          '| `assign-rep` | New, Scheduled, Dispatched | sets or (null) clears the field rep | rep.assigned |',
          '| `schedule` | New | status Scheduled, the date and ETA entered | job.scheduled |',
          '| `schedule` | Scheduled | the date or ETA changed | schedule.updated |',
          '| `dispatch` | Scheduled | status Dispatched | job.dispatched |',
          '| `complete` | Dispatched | status Completed, completedAt, qualityReviewPassed (must be true) | job.completed |',
          '| `transmit-deliverables` | Dispatched, Completed | deliverablesTransmittedAt, deliverablesNotes (the notes sent) | deliverables.transmitted |',
          '',
          "Each change adds exactly 1 to the visit's version, moves updatedAt and records its event in the same transaction. An action that changes nothing (the current rep again, the same schedule again) answers the visit unchanged and publishes nothing, so a repeated request is harmless. Lifecycle events reach the tenant's subscriptions only while its webhookAccess and apiEnabled are on. Concurrent actions on one visit run one after the other.",
        ].join('\n'),
        tags,
        params: OperatorVisitParams,
        body: WorkflowActionBody,
        response: {
          200: visitResponse,
          ...problemResponses(
            [401, 404, 409, 422],
            { 409: "The visit's status does not allow the action (invalid-state)." },
            {},
            { 409: ['invalid-state'] },
          ),
        },
      },
    },
    async (request, reply) => {
      const resource = await transaction(db, undefined, async (tx) => {
        // Validated against WorkflowActionBody; the type provider cannot infer a discriminated oneOf.
        const { visit } = await performWorkflowAction(
          tx,
          request.params.visitId,
          request.body as WorkflowAction,
          clock.now(),
          request.log,
        );
        return render(tx, visit);
      });
      return sendResource(reply, 200, resource);
    },
  );
}
