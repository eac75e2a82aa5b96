/**
 * The operator's views of the delivery queue: deliveries by filter, one delivery, reopening failed ones for
 * a fresh round of attempts, and per subscription the recent deliveries by status (its health).
 */
import type { Expression, ExpressionBuilder, SqlBool, Transaction } from 'kysely';
import type { Executor } from '../../../db/executor.js';
import type { Database, DeliveryStatus, WebhookDeliveryRow } from '../../../db/schema.js';
import { notifyWorkers } from '../wake-workers.js';

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

/** A page of the list: at most `limit` records, in queue order, after the record of `afterSeq` when given. */
export interface DeliveryPage {
  limit: number;
  order: 'asc' | 'desc';
  afterSeq?: number | undefined;
}

export async function listDeliveries(
  db: Executor,
  filter: DeliveryFilter,
  { limit, order, afterSeq }: DeliveryPage,
): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where(matching(filter));
  if (afterSeq !== undefined) query = query.where('seq', order === 'asc' ? '>' : '<', afterSeq);
  return query.orderBy('seq', order).limit(limit).execute();
}

/** The queue position of a delivery (what a page after it starts from). */
export async function deliverySeq(db: Executor, id: string): Promise<number | undefined> {
  const row = await db.selectFrom('webhook_deliveries').select('seq').where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : Number(row.seq);
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
