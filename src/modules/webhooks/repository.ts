/**
 * Webhook subscriptions and the delivery queue in the database. Subscription functions take the tenant;
 * the queue functions serve the worker and the operator API, which work across tenants.
 */
import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
  sql,
  type Transaction,
  type Updateable,
} from 'kysely';
import { jsonb } from '../../db/json.js';
import type {
  Database,
  DeliveryAttempt,
  DeliveryStatus,
  EventRow,
  WebhookDeliveryRow,
  WebhookSubscriptionRow,
  WebhookSubscriptionsTable,
} from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import type { Executor } from '../../db/executor.js';
import { SUBSCRIPTIONS_ONLY } from '../outbox/targets.js';
import { notifyWorkers } from '../outbox/wake-workers.js';

// ---------------------------------------------------------------------------------------------
// Subscriptions

export async function insertSubscription(
  tx: Executor,
  row: Omit<
    WebhookSubscriptionRow,
    | 'seq'
    | 'consecutive_failures'
    | 'failing_since'
    | 'last_success_at'
    | 'last_failure_at'
    | 'last_error'
    | 'deactivated_reason'
  >,
): Promise<WebhookSubscriptionRow> {
  return tx.insertInto('webhook_subscriptions').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findSubscription(
  db: Executor,
  tenantId: string,
  id: string,
): Promise<WebhookSubscriptionRow | undefined> {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where(SUBSCRIPTIONS_ONLY)
    .executeTakeFirst();
}

export async function listSubscriptions(db: Executor, tenantId: string): Promise<WebhookSubscriptionRow[]> {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(SUBSCRIPTIONS_ONLY)
    .orderBy('seq')
    .execute();
}

/** How many of the tenant's subscriptions are active, leaving out `exceptId` (one about to be activated). */
export async function countActiveSubscriptions(db: Executor, tenantId: string, exceptId?: string): Promise<number> {
  let query = db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('is_active', '=', true)
    // A sandbox listener does not count toward the cap.
    .where(SUBSCRIPTIONS_ONLY);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  return Number((await query.executeTakeFirstOrThrow()).count);
}

/**
 * Applies changes only while the signing version is still the one the caller read: a stale update
 * racing a signing-version change matches no row (SPEC: 409), without holding a lock across the DNS check.
 */
export async function updateSubscriptionIfSigningVersion(
  db: Executor,
  tenantId: string,
  id: string,
  expectedSigningVersion: string,
  changes: Updateable<WebhookSubscriptionsTable>,
): Promise<WebhookSubscriptionRow | undefined> {
  return db
    .updateTable('webhook_subscriptions')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('signing_version', '=', expectedSigningVersion as 'legacy' | 'v1')
    .returningAll()
    .executeTakeFirst();
}

export interface DeliveryCounts {
  succeeded: number;
  failed: number;
  pending: number;
}

/** Per subscription of the tenant, its deliveries queued since `since`, by status. */
export async function countDeliveriesBySubscription(
  db: Executor,
  tenantId: string,
  since: Date,
): Promise<Map<string, DeliveryCounts>> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => ['subscription_id', 'status', eb.fn.countAll<number>().as('count')])
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', since)
    .groupBy(['subscription_id', 'status'])
    .execute();
  const counts = new Map<string, DeliveryCounts>();
  for (const row of rows) {
    const entry = counts.get(row.subscription_id) ?? { succeeded: 0, failed: 0, pending: 0 };
    entry[row.status] = Number(row.count);
    counts.set(row.subscription_id, entry);
  }
  return counts;
}

/** A successful attempt: the failure streak ends. Written at most once a second per subscription while healthy. */
export async function recordSubscriptionSuccess(db: Executor, id: string, now: Date): Promise<void> {
  const aSecondAgo = new Date(now.getTime() - 1_000);
  await db
    .updateTable('webhook_subscriptions')
    .set({ consecutive_failures: 0, failing_since: null, last_success_at: now })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('consecutive_failures', '>', 0),
        eb('last_success_at', 'is', null),
        eb('last_success_at', '<', aSecondAgo),
      ]),
    )
    .execute();
}

/**
 * A failed attempt extends the failure streak. With `disableAfterMs` > 0, a subscription that has been
 * failing for at least that long, without a success in between, is deactivated and the reason kept.
 */
export async function recordSubscriptionFailure(
  db: Executor,
  id: string,
  now: Date,
  error: string,
  disableAfterMs: number,
): Promise<boolean> {
  const cutoff = new Date(now.getTime() - disableAfterMs);
  const disable = sql<boolean>`(${disableAfterMs > 0} and is_active and coalesce(failing_since, ${now}) <= ${cutoff})`;
  const reason = `deactivated by the service after failing without a success since %s (WEBHOOK_AUTO_DISABLE_AFTER)`;
  const row = await db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({
      consecutive_failures: eb('consecutive_failures', '+', 1),
      failing_since: sql`coalesce(failing_since, ${now})`,
      last_failure_at: now,
      last_error: error,
      is_active: sql`case when ${disable} then false else is_active end`,
      deactivated_reason: sql`case when ${disable} then replace(${reason}, '%s', to_char(coalesce(failing_since, ${now}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) else deactivated_reason end`,
      updated_at: sql`case when ${disable} then ${now} else updated_at end`,
    }))
    .where('id', '=', id)
    // A listener lives as long as its stream (and grace), never deactivated for failing.
    .where(SUBSCRIPTIONS_ONLY)
    // True only for the update that deactivated it (updated_at moves only then).
    .returning(sql<boolean>`(not is_active and deactivated_reason is not null and updated_at = ${now})`.as('disabled'))
    .executeTakeFirst();
  return row?.disabled ?? false;
}

// ---------------------------------------------------------------------------------------------
// The queue

/**
 * Queues one delivery per active subscription of the tenant whose eventTypes contain the event's type,
 * in the caller's transaction, and wakes the workers when it commits. Lifecycle events other than
 * ticket.created are queued only while the tenant has both webhookAccess and apiEnabled on.
 */
export async function enqueueDeliveries(
  tx: Transaction<Database>,
  tenantId: string,
  event: EventRow,
  now: Date,
): Promise<number> {
  let query = tx
    .selectFrom('webhook_subscriptions as s')
    .innerJoin('tenants as t', 't.id', 's.tenant_id')
    .select('s.id')
    .where('s.tenant_id', '=', tenantId)
    .where('s.is_active', '=', true)
    .where(sql<boolean>`${event.type} = any(s.event_types)`);
  if (event.type !== 'ticket.created')
    query = query.where('t.webhook_access', '=', true).where('t.api_enabled', '=', true);
  const subscriptions = await query.orderBy('s.seq').execute();
  if (subscriptions.length === 0) return 0;
  await tx
    .insertInto('webhook_deliveries')
    .values(
      subscriptions.map((subscription) => ({
        id: newId('dlv'),
        tenant_id: tenantId,
        event_id: event.id,
        event_type: event.type,
        subscription_id: subscription.id,
        status: 'pending' as const,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  await notifyWorkers(tx);
  return subscriptions.length;
}

/**
 * Which tenants' deliveries a worker serves: all of them (undefined), or only those listed, read at every
 * claim. Deployments leave it unset; tests that share one database with other test files set it.
 */
export type TenantScope = ReadonlySet<string> | undefined;

export function inScope(column: ReturnType<typeof sql.ref>, scope: TenantScope) {
  return scope === undefined ? sql<boolean>`true` : sql<boolean>`${column} = any(${[...scope]}::text[])`;
}

const LOST_ATTEMPT_ERROR = "no outcome recorded: the worker's lease expired";

/** The attempt-log entry of an attempt whose worker never reported back, built from the row in SQL. */
export const lostAttemptEntry = sql`jsonb_build_array(jsonb_build_object(
  'attempt', d.attempts,
  'at', to_char(d.claimed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'statusCode', null, 'error', ${LOST_ATTEMPT_ERROR}::text, 'durationMs', null))`;

/**
 * Fails, terminally, deliveries whose worker died during the last attempt of their budget: the lease ran
 * out and no attempt is left. Returns their subscription ids (for the health record).
 */
export async function failExhaustedLeases(
  db: Kysely<Database>,
  now: Date,
  maxAttempts: number,
  scope: TenantScope,
): Promise<string[]> {
  const result = await sql<{ subscription_id: string }>`
    update webhook_deliveries d set
      status = 'failed',
      attempt_log = d.attempt_log || ${lostAttemptEntry},
      last_error = ${LOST_ATTEMPT_ERROR}::text,
      leased_until = null,
      completed_at = ${now},
      updated_at = ${now}
    where d.status = 'pending' and d.next_attempt_at <= ${now} and d.leased_until is not null
      and d.attempts - d.round_start >= ${maxAttempts}
      and ${inScope(sql.ref('d.tenant_id'), scope)}
    returning d.subscription_id
  `.execute(db);
  return result.rows.map((row) => row.subscription_id);
}

export type AttemptOutcome =
  | { status: 'succeeded' }
  | { status: 'failed' }
  | { status: 'pending'; nextAttemptAt: Date };

/** One attempt's outcome, to be recorded with others in one statement. */
export interface AttemptRecord {
  deliveryId: string;
  entry: DeliveryAttempt;
  outcome: AttemptOutcome;
  now: Date;
}

/**
 * Records attempt outcomes, many in one statement, each fenced on its attempt number: when a lease ran
 * out and another worker claimed the delivery again (or the operator changed it), that row is left alone.
 * Returns, per record in order, whether it was written.
 */
export async function recordAttempts(db: Kysely<Database>, records: readonly AttemptRecord[]): Promise<boolean[]> {
  if (records.length === 0) return [];
  const rows = records.map((record) => ({
    id: record.deliveryId,
    attempt: record.entry.attempt,
    status: record.outcome.status,
    entry: [record.entry],
    error: record.entry.error,
    next_attempt_at: record.outcome.status === 'pending' ? record.outcome.nextAttemptAt.toISOString() : null,
    now: record.now.toISOString(),
  }));
  const result = await sql<{ id: string }>`
    update webhook_deliveries d set
      status = v.status,
      attempt_log = d.attempt_log || v.entry,
      last_error = v.error,
      leased_until = null,
      next_attempt_at = coalesce(v.next_attempt_at, d.next_attempt_at),
      completed_at = case when v.status = 'pending' then null else v.now end,
      updated_at = v.now
    from jsonb_to_recordset(${jsonb(rows)}) as v(id text, attempt integer, status text, entry jsonb, error text, next_attempt_at timestamptz, now timestamptz)
    where d.id = v.id and d.attempts = v.attempt and d.status = 'pending' and d.leased_until is not null
    returning d.id
  `.execute(db);
  const written = new Set(result.rows.map((row) => row.id));
  return records.map((record) => written.has(record.deliveryId));
}

// ---------------------------------------------------------------------------------------------
// Operator views

export interface DeliveryFilter {
  tenantId?: string | undefined;
  status?: DeliveryStatus | undefined;
  eventId?: string | undefined;
  eventType?: string | undefined;
  subscriptionId?: string | undefined;
  createdFrom?: string | undefined;
  createdBefore?: string | undefined;
}

/** The filter's conditions (all of them; none matches every delivery), for a select and an update alike. */
function matching(filter: DeliveryFilter) {
  return (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) => {
    const conditions: Expression<SqlBool>[] = [];
    if (filter.tenantId !== undefined) conditions.push(eb('webhook_deliveries.tenant_id', '=', filter.tenantId));
    if (filter.status !== undefined) conditions.push(eb('webhook_deliveries.status', '=', filter.status));
    if (filter.eventId !== undefined) conditions.push(eb('webhook_deliveries.event_id', '=', filter.eventId));
    if (filter.eventType !== undefined) conditions.push(eb('webhook_deliveries.event_type', '=', filter.eventType));
    if (filter.subscriptionId !== undefined)
      conditions.push(eb('webhook_deliveries.subscription_id', '=', filter.subscriptionId));
    if (filter.createdFrom !== undefined)
      conditions.push(eb('webhook_deliveries.created_at', '>=', new Date(filter.createdFrom)));
    if (filter.createdBefore !== undefined)
      conditions.push(eb('webhook_deliveries.created_at', '<', new Date(filter.createdBefore)));
    return eb.and(conditions);
  };
}

export async function listDeliveries(
  db: Executor,
  filter: DeliveryFilter,
  limit: number,
  order: 'asc' | 'desc' = 'asc',
): Promise<WebhookDeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where(matching(filter))
    .orderBy('seq', order)
    .limit(limit)
    .execute();
}

/** How many terminally failed deliveries match the filter (a bulk retry's dry run). */
export async function countFailedDeliveries(db: Executor, filter: DeliveryFilter): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where(matching({ ...filter, status: 'failed' }))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findDelivery(db: Executor, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** What reopening a failed delivery changes: a fresh round of attempts, due now. */
function reopened(now: Date) {
  return (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
    ({
      status: 'pending',
      round_start: eb.ref('attempts'),
      next_attempt_at: now,
      leased_until: null,
      completed_at: null,
      updated_at: now,
    }) as const;
}

/** Opens a fresh round of attempts for a terminally failed delivery; undefined when it is not failed. */
export async function reopenFailedDelivery(
  tx: Transaction<Database>,
  id: string,
  now: Date,
): Promise<WebhookDeliveryRow | undefined> {
  const row = await tx
    .updateTable('webhook_deliveries')
    .set(reopened(now))
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .returningAll()
    .executeTakeFirst();
  if (row) await notifyWorkers(tx);
  return row;
}

/** Opens a fresh round for every terminally failed delivery matching the filter, in one statement; returns how many. */
export async function reopenFailedDeliveries(
  tx: Transaction<Database>,
  filter: DeliveryFilter,
  now: Date,
): Promise<number> {
  const result = await tx
    .updateTable('webhook_deliveries')
    .set(reopened(now))
    .where(matching({ ...filter, status: 'failed' }))
    .executeTakeFirst();
  const count = Number(result.numUpdatedRows);
  if (count > 0) await notifyWorkers(tx);
  return count;
}
