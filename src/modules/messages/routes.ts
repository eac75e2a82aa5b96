/** The four message endpoints (SPEC: Endpoints, Messages). */
import { Type } from 'typebox';
import { transaction } from '../../db/transaction.js';
import type { AppContext } from '../../app-context.js';
import { IfMatchHeader } from '../../http/concurrency.js';
import { serializeResource } from '../../http/envelope.js';
import { sendRenderedList, sendRenderedResource } from '../../http/rendered-resources.js';
import { createdHeaders, etagHeaders } from '../../http/headers.js';
import {
  createResource,
  IdempotencyKeyHeader,
  KEYED_CREATE_CONFLICTS,
  sendCreateOutcome,
} from '../../http/idempotency.js';
import { IdParams, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import {
  MessageCreateBody,
  MessageDocument,
  MessageList,
  MessageListQuery,
  MessagePatchBody,
  MessageResource,
} from './schemas.js';
import * as messages from './service.js';

const tags = ['Messages'];

const SET_BY_SERVICE =
  'The service sets svcPm (true), recordOwner ("Client API"), and internally method (Email) and occurredAt (now); status defaults to Open. urgency accepts the four full values or the short words Low, Normal, High, Critical, and is returned as the full value.';

export function registerMessageRoutes(app: Api, ctx: AppContext): void {
  const { db, clock, cursors, rendered } = ctx;
  const baseUrl = ctx.config.publicBaseUrl;

  app.get(
    '/api/v1/messages',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'listMessages',
        summary: 'List messages',
        description:
          "Every message of your client, on all your visits, or with siteVisitId one visit's messages; cursor-paginated, oldest first. A siteVisitId that is not one of your visits lists nothing (200, data []), as the filters of sites and site visits do.",
        tags,
        querystring: MessageListQuery,
        response: { 200: MessageList, ...problemResponses([401, 403, 422, 429]) },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.auth;
      const page = await messages.listMessages(db, cursors, tenantId, request.query);
      const body = await rendered.list(
        messages.MESSAGE_TYPE,
        tenantId,
        page,
        async (ids) =>
          (await messages.findMessageViews(db, tenantId, ids)).map((view) => messages.toMessageResource(view, baseUrl)),
        (message) => serializeResource(reply, MessageResource, message),
      );
      return sendRenderedList(reply, body);
    },
  );

  app.post(
    '/api/v1/messages',
    {
      config: { scope: 'site-visits:write' },
      schema: {
        operationId: 'createMessage',
        summary: 'Add a message to a site visit',
        description: `siteVisitId must be one of your visits (404 otherwise). ${SET_BY_SERVICE} Attach a file afterwards with POST /api/v1/messages/{id}/file-attachment.`,
        tags,
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        body: MessageCreateBody,
        response: {
          201: { ...MessageDocument, headers: createdHeaders },
          ...problemResponses(
            [401, 403, 404, 409, 422, 429],
            {
              404: 'siteVisitId is not one of your site visits.',
              409: 'An Idempotency-Key conflict or pending request.',
            },
            {},
            { 409: KEYED_CREATE_CONFLICTS },
          ),
        },
      },
    },
    async (request, reply) => {
      const outcome = await createResource(
        db,
        clock,
        request,
        { resourceType: messages.MESSAGE_TYPE, exists: messages.messageExists },
        async (tx) => {
          const row = await messages.createMessage(tx, request.auth.tenantId, request.body, clock.now());
          return messages.toMessageResource({ row, attachment: [] }, baseUrl);
        },
      );
      return sendCreateOutcome(reply, outcome);
    },
  );

  app.get(
    '/api/v1/messages/:id',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'getMessage',
        summary: 'Get a message',
        tags,
        params: IdParams,
        querystring: NoQuery,
        response: { 200: { ...MessageDocument, headers: etagHeaders }, ...problemResponses([401, 403, 404, 429]) },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.auth;
      const { id } = request.params;
      const message = await rendered.one(
        messages.MESSAGE_TYPE,
        tenantId,
        id,
        () => messages.messageVersion(db, tenantId, id),
        async () => {
          const [view] = await messages.loadMessageViews(db, tenantId, [await messages.getMessage(db, tenantId, id)]);
          return messages.toMessageResource(view!, baseUrl);
        },
        (resource) => serializeResource(reply, MessageResource, resource),
      );
      return sendRenderedResource(reply, message);
    },
  );

  app.patch(
    '/api/v1/messages/:id',
    {
      config: { scope: 'site-visits:write' },
      schema: {
        operationId: 'updateMessage',
        summary: 'Update a message',
        description:
          'Only supplied fields change: type, messageThread, status (Open or Closed), urgency, buyer, clientContacts. siteVisitId cannot be changed (422). A short urgency word is stored as its full value.',
        tags,
        params: IdParams,
        headers: Type.Object({ 'if-match': IfMatchHeader }),
        body: MessagePatchBody,
        response: {
          200: { ...MessageDocument, headers: etagHeaders },
          ...problemResponses(
            [401, 403, 404, 409, 422, 429],
            { 409: 'If-Match does not match the current ETag (version-conflict).' },
            {},
            { 409: ['version-conflict'] },
          ),
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.auth;
      const view = await transaction(db, tenantId, async (tx) => {
        const row = await messages.patchMessage(
          tx,
          tenantId,
          request.params.id,
          request.body,
          request.headers['if-match'],
          clock.now(),
        );
        return (await messages.loadMessageViews(tx, tenantId, [row]))[0]!;
      });
      const kept = rendered.keep(
        messages.MESSAGE_TYPE,
        tenantId,
        messages.toMessageResource(view, baseUrl),
        (resource) => serializeResource(reply, MessageResource, resource),
      );
      return sendRenderedResource(reply, kept);
    },
  );
}
