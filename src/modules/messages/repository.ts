/** Messages in the database. Every function takes the tenant: another tenant's message is simply not found. */
import { sql, type Transaction, type UpdateObject } from 'kysely';
import type { Database, MessageRow, NewMessage } from '../../db/schema.js';
import { updatedAtNotBefore } from '../../db/versioned-rows.js';
import type { Executor } from '../../db/executor.js';
import { readListing } from '../../db/listing.js';
import { tenantRowReads, tenantVersionReads } from '../../db/tenant-row-reads.js';
import { CLIENT_API_RECORD_OWNER } from './schemas.js';

export async function insertMessage(tx: Transaction<Database>, message: NewMessage): Promise<MessageRow> {
  return tx.insertInto('messages').values(message).returningAll().executeTakeFirstOrThrow();
}

export async function findMessage(db: Executor, tenantId: string, id: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The tenant's message by id: outside a transaction gathered with the turn's other reads into one statement, inside one `findMessage`. */
export const readMessage = tenantRowReads<MessageRow>(
  (db, ids, tenantIds) =>
    db.selectFrom('messages').selectAll().where('id', '=', ids).where('tenant_id', '=', tenantIds),
  findMessage,
);

/** The tenant's message's version by id, batched as `readMessage`. */
export const readMessageVersion = tenantVersionReads('messages');

export async function messageExists(db: Executor, tenantId: string, id: string): Promise<boolean> {
  return (
    (await db
      .selectFrom('messages')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()) !== undefined
  );
}

/** The message, locked until the transaction ends, so that a concurrent update waits and then re-reads. */
export async function findMessageForUpdate(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<MessageRow | undefined> {
  return tx
    .selectFrom('messages')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * A client's change to the message (its PATCH, a new attachment version): `changes`, version + 1, and back in the
 * operator's backlog if the operator had handled it. Only a client's message is reopened, as
 * messages_client_unhandled's predicate states (UNHANDLED_CLIENT_MESSAGE); another keeps its state. Undefined when
 * the message is not the tenant's.
 */
export async function updateMessage(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
  changes: UpdateObject<Database, 'messages'>,
): Promise<MessageRow | undefined> {
  return tx
    .updateTable('messages')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1), handled_at: REOPENED_IF_CLIENT_MESSAGE }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Records a new attachment version on the message: a client's change (`updateMessage`), updatedAt not earlier. */
export async function touchMessage(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
  now: Date,
): Promise<Date | undefined> {
  return (await updateMessage(tx, tenantId, id, { updated_at: updatedAtNotBefore(now) }))?.updated_at;
}

/**
 * One page in creation order after `afterSeq`, of all the tenant's messages or of one visit's: its listing
 * (`readListing`) of `limit` rows at least (callers ask one extra).
 */
export async function listMessages(
  db: Executor,
  tenantId: string,
  siteVisitId: string | undefined,
  afterSeq: number | undefined,
  limit: number,
): Promise<string> {
  const query = messagesAfter(db, tenantId, siteVisitId, afterSeq).select(['id', 'version', 'seq']);
  return readListing(db, tenantId, query.orderBy('seq'), limit);
}

/**
 * The tenant's messages, or one visit's, after `afterSeq` (the lists' filter). One visit's is an index scan of
 * messages_tenant_visit_seq (migration 0013), however many messages it has.
 */
function messagesAfter(db: Executor, tenantId: string, siteVisitId: string | undefined, afterSeq: number | undefined) {
  let query = db.selectFrom('messages').where('tenant_id', '=', tenantId);
  if (siteVisitId !== undefined) query = query.where('site_visit_id', '=', siteVisitId);
  if (afterSeq !== undefined) query = query.where('seq', '>', afterSeq);
  return query;
}

/** The tenant's messages with these ids, in no particular order. */
export async function findMessages(db: Executor, tenantId: string, ids: readonly string[]): Promise<MessageRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('messages').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}

/** The tenant of a message named by id alone (the operator's routes), undefined when there is none. */
export async function findMessageTenantId(db: Executor, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('messages').select('tenant_id').where('id', '=', id).executeTakeFirst();
  return row?.tenant_id;
}

/** The place (`seq`) of one of the visit's messages, undefined when the visit has no message with this id. */
export async function findVisitMessageSeq(
  db: Executor,
  tenantId: string,
  siteVisitId: string,
  id: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('messages')
    .select('seq')
    .where('tenant_id', '=', tenantId)
    .where('site_visit_id', '=', siteVisitId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.seq;
}

/** Up to `limit` of the visit's messages after `afterSeq`, oldest first (messages_tenant_visit_seq's order). */
export async function listVisitMessages(
  db: Executor,
  tenantId: string,
  siteVisitId: string,
  afterSeq: number | undefined,
  limit: number,
): Promise<MessageRow[]> {
  return messagesAfter(db, tenantId, siteVisitId, afterSeq).selectAll().orderBy('seq').limit(limit).execute();
}

/**
 * The clients' messages the operator has not handled, on `messages as m`: messages_client_unhandled's predicate
 * (migration 0016) as the index states it, literals and all, so that the planner reads the backlog through it. The
 * inbox's unhandled pages and the count state it once, here.
 */
const UNHANDLED_CLIENT_MESSAGE = sql<boolean>`m.record_owner = ${sql.lit(CLIENT_API_RECORD_OWNER)} and m.handled_at is null`;

/** `handled_at` after a client's change (`updateMessage`, on `messages`): a client's message is not handled again. */
const REOPENED_IF_CLIENT_MESSAGE = sql<Date | null>`case when record_owner = ${sql.lit(CLIENT_API_RECORD_OWNER)} then null else handled_at end`;

/** The operator's inbox: every tenant's messages unless the filter names one; handled or not, or both. */
export interface InboxFilter {
  tenantId?: string | undefined;
  handled?: boolean | undefined;
}

/** A page of the inbox: at most `limit` messages in arrival order, after the message of `afterSeq` when given. */
export interface InboxPage {
  limit: number;
  order: 'asc' | 'desc';
  afterSeq?: number | undefined;
}

/** What a summary holds of the text, and the owner type of the attachments whose presence it reports. */
export interface InboxSummary {
  previewLength: number;
  attachmentOwnerType: string;
}

/**
 * The inbox's statement: messages in `seq` order, each with its tenant's name, its visit's ticket number (both by
 * primary key) and whether its attachment has a version (file_versions' key); only the text's first
 * `previewLength` characters leave the database. Every tenant's are the clients' messages read through
 * messages_client_arrival (migration 0014), whose predicate this states as a literal; one tenant's are read through
 * messages_tenant_seq, and the predicate is left out there, lest the planner walk every tenant's to find the
 * tenant's. It excludes nothing: the client API writes every message, each with recordOwner `Client API`.
 * Unhandled ones (`handled: false`) are read through messages_client_unhandled (migration 0016), the backlog only,
 * whose predicate is stated with or without a tenant: walking every tenant's backlog for one tenant's reads what
 * the operator has not handled, never the handled history.
 */
export function inboxStatement(db: Executor, filter: InboxFilter, page: InboxPage, summary: InboxSummary) {
  const { previewLength, attachmentOwnerType } = summary;
  let query = db
    .selectFrom('messages as m')
    .innerJoin('tenants as t', 't.id', 'm.tenant_id')
    .innerJoin('site_visits as v', 'v.id', 'm.site_visit_id')
    .select((eb) => [
      'm.id',
      'm.version',
      'm.tenant_id',
      't.name as tenant_name',
      'm.site_visit_id',
      'v.client_ticket_number',
      'm.record_owner',
      'm.type',
      'm.urgency',
      'm.created_at',
      'm.handled_at',
      sql<string>`substr(m.message_thread, 1, ${previewLength})`.as('preview'),
      sql<boolean>`char_length(m.message_thread) > ${previewLength}`.as('preview_truncated'),
      eb
        .exists(
          eb
            .selectFrom('file_versions as f')
            .select(sql`1`.as('one'))
            .whereRef('f.tenant_id', '=', 'm.tenant_id')
            .where('f.owner_type', '=', attachmentOwnerType)
            .whereRef('f.owner_id', '=', 'm.id'),
        )
        .$castTo<boolean>()
        .as('has_file_attachment'),
    ]);
  query =
    filter.tenantId === undefined
      ? query.where('m.record_owner', '=', sql.lit(CLIENT_API_RECORD_OWNER))
      : query.where('m.tenant_id', '=', filter.tenantId);
  if (filter.handled === false) query = query.where(UNHANDLED_CLIENT_MESSAGE);
  if (filter.handled === true) query = query.where('m.handled_at', 'is not', null);
  if (page.afterSeq !== undefined) query = query.where('m.seq', page.order === 'asc' ? '>' : '<', page.afterSeq);
  return query.orderBy('m.seq', page.order).limit(page.limit);
}

export type InboxRow = Awaited<ReturnType<ReturnType<typeof inboxStatement>['execute']>>[number];

export function listInbox(
  db: Executor,
  filter: InboxFilter,
  page: InboxPage,
  summary: InboxSummary,
): Promise<InboxRow[]> {
  return inboxStatement(db, filter, page, summary).execute();
}

/** A message's place in arrival order (where an inbox page after it starts), whichever tenant's it is. */
export async function findMessageSeq(db: Executor, id: string): Promise<number | undefined> {
  const row = await db.selectFrom('messages').select('seq').where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : Number(row.seq);
}

/**
 * How many clients' messages are not handled, of every tenant or of the filter's one, counted up to `limit` + 1
 * (more than `limit`: at least that many): an index-only walk of at most that many entries of
 * messages_client_unhandled (every tenant's) or messages_tenant_client_unhandled (one tenant's, migration 0017),
 * however large the table and the other tenants' backlog.
 */
export function countUnhandledStatement(db: Executor, filter: Pick<InboxFilter, 'tenantId'>, limit: number) {
  let backlog = db.selectFrom('messages as m').select(sql`1`.as('one')).where(UNHANDLED_CLIENT_MESSAGE);
  if (filter.tenantId !== undefined) backlog = backlog.where('m.tenant_id', '=', filter.tenantId);
  return db.selectFrom(backlog.limit(limit + 1).as('backlog')).select((eb) => eb.fn.countAll<string>().as('count'));
}

export async function countUnhandled(
  db: Executor,
  filter: Pick<InboxFilter, 'tenantId'>,
  limit: number,
): Promise<number> {
  return Number((await countUnhandledStatement(db, filter, limit).executeTakeFirstOrThrow()).count);
}

/**
 * The messages with these ids, whichever tenant's, and their versions, locked until the transaction ends, so that
 * a client's change to one waits for the operator's mark (and then reopens it), and one under way is read once it
 * has committed. Locked in id order: two marks of overlapping messages never each hold what the other waits for.
 */
export async function lockMessageVersions(
  tx: Transaction<Database>,
  ids: readonly string[],
): Promise<{ id: string; version: number }[]> {
  return tx.selectFrom('messages').select(['id', 'version']).where('id', 'in', ids).orderBy('id').forUpdate().execute();
}

/**
 * Marks the messages with these ids handled at `handledAt`, or (null) not handled; a message already in that
 * state keeps it (its first handling time). Answers how many changed.
 */
export async function setHandled(db: Executor, ids: readonly string[], handledAt: Date | null): Promise<number> {
  const result = await db
    .updateTable('messages')
    .set({ handled_at: handledAt })
    .where('id', 'in', ids)
    .where('handled_at', handledAt === null ? 'is not' : 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
