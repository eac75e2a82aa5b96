/**
 * Operator API: the messages clients sent about their visits (their notes and attachments), which the operator,
 * who performs the visits, reads: every tenant's as they arrive (the inbox), and one visit's whole. The client
 * API writes them; the operator writes only its own state of each, whether it handled it (shared by the operator's
 * whole team, unseen by the client).
 */
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { BinaryResponse } from '../../http/media.js';
import { DataOf as data, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { DownloadHeaders } from '../files/schemas.js';
import { sendLatestFile } from '../files/service.js';
import { getVisitOfAnyTenant } from '../site-visits/service.js';
import { OperatorVisitParams } from '../site-visits/workflow-schemas.js';
import { FILE_ATTACHMENT_MEDIA_TYPES, fileAttachmentOwner } from './file-attachment.js';
import {
  HANDLED_BATCH,
  HandledBody,
  HandledResult,
  InboxMessage,
  InboxQuery,
  PREVIEW_LENGTH,
  UNHANDLED_COUNT_LIMIT,
  UnhandledCount,
  UnhandledCountQuery,
} from './inbox-schemas.js';
import {
  countUnhandled,
  listInbox,
  markHandled,
  listVisitMessages,
  messageTenantOfAnyTenant,
  toOperatorMessageResource,
} from './operator-messages.js';
import { OperatorMessageListQuery, OperatorMessageParams, OperatorMessageResource } from './schemas.js';

const tags = ['Messages'];

export function registerMessageAdminRoutes(app: Api, ctx: AppContext): void {
  const { db, clock } = ctx;
  const baseUrl = ctx.config.publicBaseUrl;

  // SPEC has no event for a new message and the operator receives no webhooks: the operator polls this.
  app.get(
    '/admin/v1/messages',
    {
      schema: {
        operationId: 'listInboxMessages',
        summary: "List clients' messages across tenants (the inbox)",
        description: `The clients' messages of every tenant in the order they arrived, each a summary: its version, tenant, visit and its ticket number, sender, time, the text's first ${PREVIEW_LENGTH} characters and whether it has an attachment; the visit's messages (GET /admin/v1/site-visits/{visitId}/messages) hold the whole message. At most \`limit\` (default 50, at most 100), oldest first unless \`order=desc\`; \`tenantId\` keeps one tenant's. \`handled=false\` keeps those the operator has not marked handled (\`handled=true\` those it has); a client's change to a handled message (PATCH /api/v1/messages/{id} that changes a field, a new version of its attachment) makes it not handled again. The next page: the same query with \`after\` set to the last \`messageId\` of this one; a page shorter than \`limit\` is the last. New messages: poll the latest page (\`order=desc\`) and keep the ids not seen before. A message's place is given at its insert and it is listed once its transaction commits, so one committed just after a later one was read sorts before that one: paging \`after\` the newest id seen would skip it.`,
        tags,
        querystring: InboxQuery,
        response: {
          200: data(Type.Array(InboxMessage)),
          ...problemResponses([401, 422], {
            422: 'An unknown query parameter, a value out of range, or `after` names no message.',
          }),
        },
      },
    },
    async (request) => ({ data: await listInbox(db, request.query) }),
  );

  app.get(
    '/admin/v1/messages/unhandled-count',
    {
      schema: {
        operationId: 'countUnhandledInboxMessages',
        summary: "Count the clients' messages not handled yet",
        description: `How many clients' messages of every tenant (\`tenantId\`: of that tenant) the operator has not marked handled, counted up to ${UNHANDLED_COUNT_LIMIT} (\`more\`: there are more). One shared state for the whole operator: what one person marks handled leaves everyone's count, and a client's change to a handled message (a PATCH that changes a field, a new attachment version) puts it back. Cheap enough to poll: it reads at most ${UNHANDLED_COUNT_LIMIT + 1} entries of an index of the unhandled messages, with or without \`tenantId\`.`,
        tags,
        querystring: UnhandledCountQuery,
        response: {
          200: data(UnhandledCount),
          ...problemResponses([401, 422], { 422: 'An unknown query parameter, or a tenantId over 100 characters.' }),
        },
      },
    },
    async (request) => ({ data: await countUnhandled(db, request.query) }),
  );

  app.post(
    '/admin/v1/messages/handled',
    {
      schema: {
        operationId: 'markInboxMessagesHandled',
        summary: 'Mark messages handled (or not handled again)',
        description: `Marks 1 to ${HANDLED_BATCH} messages, of any tenants, handled now (\`handled\`, the default true) or not handled (false). \`messages\` names each with the version the operator read (the inbox summary's \`version\`): one a client has changed since (a PATCH that changes a field, a new attachment version: its version is later, and the change made it not handled) is not marked and is answered in \`stale\` with its version now, so that a mark never covers a change no one saw; the others are marked. \`messageIds\` marks by id alone, whatever the version. An id that names no message, or a version later than the message's, is 422 and nothing is marked. A message already handled keeps its handledAt, so a repeated request is harmless; \`changed\` says how many changed. The operator's state only: the client API and the tenant's webhooks show nothing of it, and the message's version and updatedAt stay. A client's later change to a handled message makes it not handled again; a PATCH that changes nothing leaves it handled.`,
        tags,
        querystring: NoQuery,
        body: HandledBody,
        response: {
          200: data(HandledResult),
          ...problemResponses([401, 422], {
            422: "The body is not `messages` or `messageIds` (1 to 100 distinct ids) with an optional handled, or an id names no message, or a version is later than its message's.",
          }),
        },
      },
    },
    async (request) => ({ data: await markHandled(db, request.body, clock.now()) }),
  );

  app.get(
    '/admin/v1/site-visits/:visitId/messages',
    {
      schema: {
        operationId: 'listTenantSiteVisitMessages',
        summary: "List a site visit's messages",
        description:
          "The messages the client added to the visit, oldest first as the client API lists them, each as the client API represents it; fileAttachment.url is the operator's download. At most `limit` (default 50, at most 100); the next page: the same request with `after` set to the last message's id of this one; a page shorter than `limit` is the last. 404 for an unknown visit.",
        tags,
        params: OperatorVisitParams,
        querystring: OperatorMessageListQuery,
        response: {
          200: data(Type.Array(OperatorMessageResource)),
          ...problemResponses([401, 404, 422], {
            422: 'An unknown query parameter, or `after` names no message of this visit.',
          }),
        },
      },
    },
    async (request) => {
      const visit = await getVisitOfAnyTenant(db, request.params.visitId);
      const views = await listVisitMessages(db, visit.tenant_id, visit.id, request.query);
      return { data: views.map((view) => toOperatorMessageResource(view, baseUrl)) };
    },
  );

  // A message's fileAttachment.url in the operator's view: the client API's download answers the operator
  // token 401, and the notes and photos the client attaches are for the operator who performs the visit.
  app.get(
    '/admin/v1/messages/:messageId/file-attachment',
    {
      schema: {
        operationId: 'downloadTenantMessageFileAttachment',
        summary: "Download a message's file attachment",
        description:
          'The latest version the client uploaded, as the type detected at upload (application/pdf, image/png or image/jpeg), with Content-Disposition naming the file. 404 for an unknown message and before the first upload.',
        tags,
        params: OperatorMessageParams,
        querystring: NoQuery,
        response: {
          200: BinaryResponse(
            [...FILE_ATTACHMENT_MEDIA_TYPES],
            'The latest version of the attachment.',
            DownloadHeaders,
          ),
          ...problemResponses([401, 404]),
        },
      },
    },
    async (request, reply) => {
      const { messageId } = request.params;
      const tenantId = await messageTenantOfAnyTenant(db, messageId);
      return sendLatestFile({ db, files: ctx.files, clock }, request, reply, fileAttachmentOwner, messageId, tenantId);
    },
  );
}
