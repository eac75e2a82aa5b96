/**
 * Sandbox webhook listeners in the database (issue 18). A listener's delivery target is a row of
 * webhook_subscriptions (id prefix whl_), so its deliveries are queued, claimed and retried like any
 * other; webhook_listeners keeps its stream's state. Client-facing functions take the tenant; those of
 * the stream holders and the delivery workers work by listener id, across tenants, like the queue's.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database, EventRow, WebhookListenerRow } from '../../db/schema.js';
import { isListenerId } from '../outbox/targets.js';
import { notifyWorkers } from '../outbox/wake-workers.js';

type Executor = Kysely<Database> | Transaction<Database>;

/** The error of a delivery left pending when its listener closed. */
export const LISTENER_CLOSED = 'listener closed';

/** Attempts that failed because no stream held the listener: the receiver was never asked. */
export const NOT_CONNECTED =
  'listener not connected: no svc listen holds its stream (it may reconnect within the grace period)';
export const STREAM_CLOSED = 'the svc listen stream closed before reporting a result';

/** Serialises listener creation per tenant (the cap), without touching the tenants table. */
export async function lockTenantListeners(tx: Transaction<Database>, tenantId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`webhook-listeners:${tenantId}`}))`.execute(tx);
}

/** The tenant's listeners that are open and not past their grace. */
export async function countLiveListeners(db: Executor, tenantId: string, now: Date): Promise<number> {
  const row = await db
    .selectFrom('webhook_listeners')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('state', '=', 'open')
    .where('alive_until', '>=', now)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export interface NewListener {
  id: string;
  tenantId: string;
  eventTypes: readonly string[];
  secretSealed: string;
  aliveUntil: Date;
  now: Date;
}

/** The listener's delivery target (its subscription row) and its stream state, in the caller's transaction. */
export async function insertListener(tx: Transaction<Database>, listener: NewListener): Promise<void> {
  await tx
    .insertInto('webhook_subscriptions')
    .values({
      id: listener.id,
      tenant_id: listener.tenantId,
      target_url: `listener://${listener.id}`,
      description: null,
      event_types: [...listener.eventTypes],
      is_active: true,
      signing_version: 'v1',
      secret_sealed: listener.secretSealed,
      created_at: listener.now,
      updated_at: listener.now,
    })
    .execute();
  await tx
    .insertInto('webhook_listeners')
    .values({
      id: listener.id,
      tenant_id: listener.tenantId,
      state: 'open',
      stream_id: null,
      alive_until: listener.aliveUntil,
      created_at: listener.now,
    })
    .execute();
}

export async function findListener(
  db: Executor,
  tenantId: string,
  id: string,
): Promise<WebhookListenerRow | undefined> {
  return db
    .selectFrom('webhook_listeners')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The listener as a delivery worker sees it before an attempt (any tenant). */
export async function listenerState(db: Executor, id: string): Promise<WebhookListenerRow | undefined> {
  return db.selectFrom('webhook_listeners').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Hands the listener to a new stream (a reconnect takes over from a stream the server may not yet have
 * seen drop); only while it is open and within its grace. Returns whether it did.
 */
export async function attachStream(
  db: Executor,
  tenantId: string,
  id: string,
  streamId: string,
  aliveUntil: Date,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_listeners')
    .set({ stream_id: streamId, alive_until: aliveUntil })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('state', '=', 'open')
    .where('alive_until', '>=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends the life of the listeners these streams still hold; returns the streams that still hold one. */
export async function renewStreams(db: Executor, streamIds: readonly string[], aliveUntil: Date): Promise<string[]> {
  if (streamIds.length === 0) return [];
  const rows = await db
    .updateTable('webhook_listeners')
    .set({ alive_until: aliveUntil })
    .where('stream_id', 'in', [...streamIds])
    .where('state', '=', 'open')
    .returning('stream_id')
    .execute();
  return rows.map((row) => row.stream_id!);
}

/** The stream dropped: the grace period starts (unless another stream took the listener over meanwhile). */
export async function detachStream(db: Executor, id: string, streamId: string, aliveUntil: Date): Promise<void> {
  await db
    .updateTable('webhook_listeners')
    .set({ stream_id: null, alive_until: aliveUntil })
    .where('id', '=', id)
    .where('stream_id', '=', streamId)
    .where('state', '=', 'open')
    .execute();
}

/**
 * The listeners' deliveries that wait only because no stream held them (their last attempt failed
 * NOT_CONNECTED or STREAM_CLOSED) are due now: what was missed while `svc listen` was away arrives as
 * soon as a stream holds the listener, not on the retry schedule (which stays for the receiver's own
 * failures). Run when a stream attaches and on every tick while it holds the listener, so that an attempt
 * that was in flight during the reconnect is caught too.
 */
export async function resumeDeliveries(tx: Transaction<Database>, ids: readonly string[], now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await tx
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: now, updated_at: now })
    .where('subscription_id', 'in', [...ids])
    .where('status', '=', 'pending')
    .where('leased_until', 'is', null)
    .where('next_attempt_at', '>', now)
    .where('last_error', 'in', [NOT_CONNECTED, STREAM_CLOSED])
    .executeTakeFirst();
  const count = Number(result.numUpdatedRows);
  if (count > 0) await notifyWorkers(tx);
  return count;
}

/**
 * Closes listeners: the tenant's one (`{ tenantId, id }`), or every open one past its grace
 * (`{ expiredAt }`). A closed listener's target stops receiving events and its pending deliveries fail
 * terminally with "listener closed". Returns the ids closed now.
 */
export async function closeListeners(
  tx: Transaction<Database>,
  which: { tenantId: string; id: string } | { expiredAt: Date },
  now: Date,
): Promise<string[]> {
  let query = tx
    .updateTable('webhook_listeners')
    .set({ state: 'closed', closed_at: now, stream_id: null })
    .where('state', '=', 'open');
  if ('expiredAt' in which) query = query.where('alive_until', '<', which.expiredAt);
  else query = query.where('tenant_id', '=', which.tenantId).where('id', '=', which.id);
  const ids = (await query.returning('id').execute()).map((row) => row.id);
  if (ids.length === 0) return ids;
  await tx
    .updateTable('webhook_subscriptions')
    .set({ is_active: false, updated_at: now })
    .where('id', 'in', ids)
    .execute();
  await tx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: LISTENER_CLOSED, leased_until: null, completed_at: now, updated_at: now })
    .where('subscription_id', 'in', ids)
    .where('status', '=', 'pending')
    .execute();
  return ids;
}

/** What a stream holder needs to send one attempt: the event and the listener's sealed secret. */
export interface ListenerAttemptSource {
  event: EventRow;
  listenerId: string;
  secretSealed: string;
  /** The delivery's attempts before its current round (a redelivery starts a new round): its budget is per round. */
  roundStart: number;
}

/** The delivery's event and secret, while this attempt is still the delivery's current one. */
export async function loadAttempt(
  db: Executor,
  deliveryId: string,
  attempt: number,
): Promise<ListenerAttemptSource | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .selectAll('e')
    .select(['s.id as listener_id', 's.secret_sealed', 'd.round_start'])
    .where('d.id', '=', deliveryId)
    .where('d.attempts', '=', attempt)
    .where('d.status', '=', 'pending')
    .executeTakeFirst();
  if (!row?.secret_sealed || !isListenerId(row.listener_id)) return undefined;
  const { listener_id, secret_sealed, round_start, ...event } = row;
  return { event, listenerId: listener_id, secretSealed: secret_sealed, roundStart: round_start };
}
