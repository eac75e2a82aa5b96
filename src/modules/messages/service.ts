/**
 * Message rules (SPEC: Message, Messages endpoint rules): creation on a visit of the tenant, partial
 * update, listing, and the resource as served with its attachment.
 */
import type { Kysely, Transaction } from 'kysely';
import { notBefore } from '../../lib/clock.js';
import { changedColumns, type ColumnsOf, suppliedColumns } from '../../db/column-changes.js';
import type { Database, ListedFileVersion, MessageRow, MessageUpdate } from '../../db/schema.js';
import { assertIfMatch } from '../../http/concurrency.js';
import { isoTime, resourceObject, type ResourceObject } from '../../http/envelope.js';
import { type CursorCodec, filteredListName, type ListingPage, readListingPage } from '../../http/pagination.js';
import { notFound, Problem } from '../../http/problem.js';
import { nameOrWhy } from '../../http/request-names.js';
import { newId } from '../../lib/ids.js';
import { toFileObject } from '../files/schemas.js';
import { fileVersionsByOwner } from '../files/service.js';
import { visitExists } from '../site-visits/service.js';
import * as repository from './repository.js';
import {
  CLIENT_API_RECORD_OWNER,
  DEFAULT_MESSAGE_STATUS,
  fullUrgency,
  type MessageAttributesValue,
  type MessageCreate,
  type MessageListQueryValue,
  type MessagePatch,
} from './schemas.js';

export const MESSAGE_TYPE = 'messages';
/** `file_versions.owner_type` of message attachments. */
export const FILE_ATTACHMENT_OWNER = 'message-file-attachment';
/** SPEC: the service sets method to Email on create. */
export const MESSAGE_METHOD = 'Email';

/** A message with the versions of its attachment (oldest first; none before the first upload). */
export interface MessageView {
  row: MessageRow;
  attachment: readonly ListedFileVersion[];
}

export function fileAttachmentUrl(baseUrl: string, messageId: string): string {
  return `${baseUrl}/api/v1/messages/${encodeURIComponent(messageId)}/file-attachment`;
}

/** `baseUrl` is PUBLIC_BASE_URL, for the absolute attachment address. */
export function toMessageResource(view: MessageView, baseUrl: string): ResourceObject<MessageAttributesValue> {
  const { row } = view;
  return resourceObject(
    MESSAGE_TYPE,
    row.id,
    {
      clientId: row.tenant_id,
      status: row.status as MessageAttributesValue['status'],
      createdAt: isoTime(row.created_at),
      updatedAt: isoTime(row.updated_at),
      siteVisitId: row.site_visit_id,
      type: row.type as MessageAttributesValue['type'],
      recordOwner: row.record_owner,
      messageThread: row.message_thread,
      fileAttachment: toFileObject(fileAttachmentUrl(baseUrl, row.id), view.attachment),
      urgency: row.urgency as MessageAttributesValue['urgency'],
      buyer: row.buyer,
      clientContacts: row.client_contacts,
      svcPm: row.svc_pm,
    },
    row.version,
  );
}

/** The views of several messages, their attachments loaded at once (a page of a list). */
export async function loadMessageViews(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  rows: readonly MessageRow[],
): Promise<MessageView[]> {
  const versions = await fileVersionsByOwner(
    db,
    tenantId,
    FILE_ATTACHMENT_OWNER,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ row, attachment: versions.get(row.id) ?? [] }));
}

function visitNotFound(siteVisitId: string): Problem {
  return new Problem('not-found', `Site visit ${nameOrWhy(siteVisitId, 'with an id', true)} was not found.`, {
    errors: { siteVisitId: ['is not one of your site visits'] },
  });
}

/**
 * Creates a message on one of the tenant's visits (404 otherwise). The service sets svcPm (true),
 * method (Email), occurredAt (now) and recordOwner (Client API); status defaults to Open and a short
 * urgency word is stored as its full value.
 */
export async function createMessage(
  tx: Transaction<Database>,
  tenantId: string,
  input: MessageCreate,
  now: Date,
): Promise<MessageRow> {
  if (!(await visitExists(tx, tenantId, input.siteVisitId))) throw visitNotFound(input.siteVisitId);
  return repository.insertMessage(tx, {
    id: newId('msg'),
    tenant_id: tenantId,
    site_visit_id: input.siteVisitId,
    type: input.type ?? null,
    status: input.status ?? DEFAULT_MESSAGE_STATUS,
    message_thread: input.messageThread,
    urgency: input.urgency == null ? null : fullUrgency(input.urgency),
    buyer: input.buyer ?? null,
    client_contacts: input.clientContacts ?? null,
    svc_pm: true,
    record_owner: CLIENT_API_RECORD_OWNER,
    method: MESSAGE_METHOD,
    occurred_at: now,
    created_at: now,
    updated_at: now,
  });
}

/** The tenant's message (404 otherwise); outside a transaction the read joins the turn's batch (`readMessage`). */
export async function getMessage(db: Kysely<Database>, tenantId: string, id: string): Promise<MessageRow> {
  const message = await repository.readMessage(db, tenantId, id);
  if (!message) throw notFound('Message');
  return message;
}

/** The tenant's message's version (404 when the tenant has no such message). */
export async function messageVersion(db: Kysely<Database>, tenantId: string, id: string): Promise<number> {
  const message = await repository.readMessageVersion(db, tenantId, id);
  if (!message) throw notFound('Message');
  return message.version;
}

/** API field → column, for the writable fields stored as given (urgency is stored in its full form). */
const COLUMNS = {
  type: 'type',
  messageThread: 'message_thread',
  status: 'status',
  buyer: 'buyer',
  clientContacts: 'client_contacts',
} as const satisfies ColumnsOf<MessagePatch, MessageRow>;

/** The stored form of each writable field of a patch that was supplied. */
function storedValues(patch: MessagePatch): Partial<MessageRow> {
  const values = suppliedColumns<MessagePatch, MessageRow>(COLUMNS, patch);
  if (patch.urgency !== undefined) values.urgency = patch.urgency === null ? null : fullUrgency(patch.urgency);
  return values;
}

/**
 * Applies the supplied fields. The version grows by one only when a stored value actually changes (a
 * short urgency word equal to the stored full value is no change), and only then does a message the operator
 * handled come back unhandled (`repository.updateMessage`).
 */
export async function patchMessage(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
  patch: MessagePatch,
  ifMatch: string | undefined,
  now: Date,
): Promise<MessageRow> {
  const message = await repository.findMessageForUpdate(tx, tenantId, id);
  if (!message) throw notFound('Message');
  assertIfMatch(ifMatch, message.version);

  const changes: MessageUpdate = changedColumns(message, storedValues(patch));
  if (Object.keys(changes).length === 0) return message;
  const at = notBefore(now, message.updated_at);
  return (await repository.updateMessage(tx, tenantId, id, { ...changes, updated_at: at }))!;
}

/**
 * A page of the tenant's messages, or of one visit's (`siteVisitId`; a visit that is not the tenant's has none):
 * their ids and versions, which `RenderedResources` turns into the page.
 */
export async function listMessages(
  db: Kysely<Database>,
  cursors: CursorCodec,
  tenantId: string,
  query: MessageListQueryValue,
): Promise<ListingPage> {
  const list = filteredListName(
    MESSAGE_TYPE,
    query.siteVisitId === undefined ? undefined : { name: 'siteVisitId', value: query.siteVisitId },
  );
  return readListingPage(cursors, list, tenantId, query, (after, limit) =>
    repository.listMessages(db, tenantId, query.siteVisitId, after, limit),
  );
}

/** The views of the tenant's messages with these ids (a list page's rows not rendered before), in no particular order. */
export async function findMessageViews(
  db: Kysely<Database>,
  tenantId: string,
  ids: readonly string[],
): Promise<MessageView[]> {
  return loadMessageViews(db, tenantId, await repository.findMessages(db, tenantId, ids));
}

/** Whether the message is still the tenant's (idempotent replays and uploads check this). */
export function messageExists(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  return repository.messageExists(db, tenantId, id);
}
