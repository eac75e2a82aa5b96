/**
 * The operator's views of messages: the inbox of every tenant's, a visit's messages, and the tenant of a message
 * named by id alone. The operator has no tenant of its own; a read of one message or visit finds the owner's and
 * then reads as that tenant.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { transaction } from '../../db/transaction.js';
import { isoTime, type ResourceObject } from '../../http/envelope.js';
import { type FieldErrors, notFound, validationProblem } from '../../http/problem.js';
import { nameOrWhy } from '../../http/request-names.js';
import { toFileObject } from '../files/schemas.js';
import {
  type HandledBodyValue,
  type HandledResultValue,
  type InboxMessageValue,
  type InboxQueryValue,
  PREVIEW_LENGTH,
  UNHANDLED_COUNT_LIMIT,
  type UnhandledCountQueryValue,
  type UnhandledCountValue,
} from './inbox-schemas.js';
import * as repository from './repository.js';
import type { OperatorMessageAttributesValue, OperatorMessageListQueryValue } from './schemas.js';
import { FILE_ATTACHMENT_OWNER, loadMessageViews, type MessageView, toMessageResource } from './service.js';

/** The operator API's download of a message's attachment: the operator token does not open the client API's. */
export function operatorFileAttachmentUrl(baseUrl: string, messageId: string): string {
  return `${baseUrl}/admin/v1/messages/${encodeURIComponent(messageId)}/file-attachment`;
}

/** The client's representation, its attachment's url the operator's download. */
export function toOperatorMessageResource(
  view: MessageView,
  baseUrl: string,
): ResourceObject<OperatorMessageAttributesValue> {
  const resource = toMessageResource(view, baseUrl);
  const fileAttachment = toFileObject(operatorFileAttachmentUrl(baseUrl, view.row.id), view.attachment);
  return { ...resource, attributes: { ...resource.attributes, fileAttachment } };
}

/**
 * One page of a visit's messages, oldest first as the client API lists them: `limit` of them, `after` the
 * message of this visit it names (422 when the visit has no such message). The visit is the tenant's: its
 * caller found it (site-visits' getVisitOfAnyTenant).
 */
export async function listVisitMessages(
  db: Kysely<Database>,
  tenantId: string,
  siteVisitId: string,
  query: OperatorMessageListQueryValue,
): Promise<MessageView[]> {
  const { after, limit = 50 } = query;
  const afterSeq =
    after === undefined ? undefined : await repository.findVisitMessageSeq(db, tenantId, siteVisitId, after);
  if (after !== undefined && afterSeq === undefined)
    throw validationProblem({ after: ['names no message of this visit'] });
  return loadMessageViews(db, tenantId, await repository.listVisitMessages(db, tenantId, siteVisitId, afterSeq, limit));
}

/** The tenant of the message with this id, whichever it is (404 when there is none). */
export async function messageTenantOfAnyTenant(db: Kysely<Database>, messageId: string): Promise<string> {
  const tenantId = await repository.findMessageTenantId(db, messageId);
  if (tenantId === undefined) throw notFound('Message');
  return tenantId;
}

const INBOX_SUMMARY = { previewLength: PREVIEW_LENGTH, attachmentOwnerType: FILE_ATTACHMENT_OWNER };

/** One page of the inbox, in arrival order (`after` the message it names, whichever tenant's: 422 when none). */
export async function listInbox(db: Kysely<Database>, query: InboxQueryValue): Promise<InboxMessageValue[]> {
  const { after, limit = 50, order = 'asc', handled, tenantId } = query;
  const filter = { tenantId, handled: handled === undefined ? undefined : handled === 'true' };
  const afterSeq = after === undefined ? undefined : await repository.findMessageSeq(db, after);
  if (after !== undefined && afterSeq === undefined) throw validationProblem({ after: ['names no message'] });
  const rows = await repository.listInbox(db, filter, { limit, order, afterSeq }, INBOX_SUMMARY);
  return rows.map(toInboxMessage);
}

function toInboxMessage(row: repository.InboxRow): InboxMessageValue {
  return {
    messageId: row.id,
    version: row.version,
    tenantId: row.tenant_id,
    tenantName: row.tenant_name,
    siteVisitId: row.site_visit_id,
    clientTicketNumber: row.client_ticket_number,
    sender: row.record_owner,
    type: row.type as InboxMessageValue['type'],
    urgency: row.urgency as InboxMessageValue['urgency'],
    createdAt: isoTime(row.created_at),
    preview: row.preview,
    previewTruncated: row.preview_truncated,
    hasFileAttachment: row.has_file_attachment,
    handledAt: row.handled_at === null ? null : isoTime(row.handled_at),
  };
}

/** The clients' messages not handled, of every tenant or of `tenantId`'s, counted up to UNHANDLED_COUNT_LIMIT. */
export async function countUnhandled(
  db: Kysely<Database>,
  query: UnhandledCountQueryValue,
): Promise<UnhandledCountValue> {
  const count = await repository.countUnhandled(db, { tenantId: query.tenantId }, UNHANDLED_COUNT_LIMIT);
  return { unhandled: Math.min(count, UNHANDLED_COUNT_LIMIT), more: count > UNHANDLED_COUNT_LIMIT };
}

/**
 * Marks the messages handled at `now` (or not handled). All or none for what names nothing: 422 for an id that
 * names no message, or (`messages`) a version the message never had. Per message for what moved on: one of
 * `messages` whose version is no longer the one read is left as it is and answered in `stale`, the others are
 * marked. Their versions are read locked, so that no client's change commits between the check and the mark.
 */
export async function markHandled(
  db: Kysely<Database>,
  body: HandledBodyValue,
  now: Date,
): Promise<HandledResultValue> {
  const { handled = true } = body;
  const seen = seenVersions(body);
  return transaction(db, undefined, async (tx) => {
    const current = new Map((await repository.lockMessageVersions(tx, [...seen.keys()])).map((r) => [r.id, r.version]));
    const errors = namesNothing(body, current);
    if (Object.keys(errors).length > 0) throw validationProblem(errors);
    const stale = [...seen]
      .filter(([id, version]) => version !== undefined && version !== current.get(id))
      .map(([messageId]) => ({ messageId, version: current.get(messageId)! }));
    const moved = new Set(stale.map((message) => message.messageId));
    const marked = [...seen.keys()].filter((id) => !moved.has(id));
    const changed = marked.length === 0 ? 0 : await repository.setHandled(tx, marked, handled ? now : null);
    return { handled, changed, stale };
  });
}

/** Each message to mark and the version read (undefined: any); 422 unless exactly one list, of distinct ids. */
function seenVersions(body: HandledBodyValue): Map<string, number | undefined> {
  const { messages, messageIds } = body;
  if (messages === undefined && messageIds === undefined)
    throw validationProblem({ messages: ['is required, or messageIds: the messages to mark'] });
  if (messages !== undefined && messageIds !== undefined)
    throw validationProblem({ messageIds: ['cannot be sent with messages: send one of them'] });
  if (messageIds !== undefined) return new Map(messageIds.map((id) => [id, undefined]));
  const seen = new Map<string, number | undefined>();
  const errors: FieldErrors = {};
  for (const [index, { messageId, version }] of (messages ?? []).entries()) {
    if (seen.has(messageId)) errors[`messages[${index}].messageId`] = ['repeats an id listed before it'];
    seen.set(messageId, version);
  }
  if (Object.keys(errors).length > 0) throw validationProblem(errors);
  return seen;
}

/** The request's ids that name no message, and versions later than the message's, as 422 errors. */
function namesNothing(body: HandledBodyValue, current: ReadonlyMap<string, number>): FieldErrors {
  const errors: FieldErrors = {};
  const unknown = (body.messageIds ?? []).filter((id) => !current.has(id));
  if (unknown.length > 0) errors.messageIds = unknown.map((id) => `names no message: ${nameOrWhy(id, 'an id')}`);
  for (const [index, { messageId, version }] of (body.messages ?? []).entries()) {
    const now = current.get(messageId);
    if (now === undefined) errors[`messages[${index}].messageId`] = ['names no message'];
    else if (version > now) errors[`messages[${index}].version`] = [`is later than the message's version (${now})`];
  }
  return errors;
}
