/**
 * The operator's views of the delivery queue: the deliveries with their attempt logs, retrying failed
 * ones, and the recent outcomes per subscription that a subscription's health shows.
 */
import type { Kysely } from 'kysely';
import { transaction } from '../../db/transaction.js';
import type { Executor } from '../../db/executor.js';
import type { Database, WebhookDeliveryRow } from '../../db/schema.js';
import { isoTime, isoTimeOrNull } from '../../http/envelope.js';
import { notFound, Problem, validationProblem } from '../../http/problem.js';
import type {
  BulkRetryBodyValue,
  BulkRetryResultValue,
  DeliveryListQueryValue,
  DeliveryValue,
} from './delivery-schemas.js';
import * as views from './repository/operator-views.js';
import { isListenerId } from './targets.js';

export type { DeliveryCounts } from './repository/operator-views.js';

/** Per subscription of the tenant, its deliveries queued since `since`, by status. */
export function deliveryCountsBySubscription(
  db: Executor,
  tenantId: string,
  since: Date,
): Promise<Map<string, views.DeliveryCounts>> {
  return views.countDeliveriesBySubscription(db, tenantId, since);
}

export function toDelivery(row: WebhookDeliveryRow): DeliveryValue {
  return {
    deliveryId: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    subscriptionId: row.subscription_id,
    targetKind: isListenerId(row.subscription_id) ? 'listener' : 'subscription',
    tenantId: row.tenant_id,
    status: row.status,
    attempts: row.attempts,
    attemptLog: row.attempt_log,
    nextAttemptAt: row.status === 'pending' ? isoTime(row.next_attempt_at) : null,
    lastError: row.last_error,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    completedAt: isoTimeOrNull(row.completed_at),
  };
}

/** The records matching the query, one page of them (`after` the last of the page before). */
export async function listDeliveries(db: Kysely<Database>, query: DeliveryListQueryValue): Promise<DeliveryValue[]> {
  const { after, limit = 1000, order = 'asc', ...filter } = query;
  const afterSeq = after === undefined ? undefined : await views.deliverySeq(db, after);
  if (after !== undefined && afterSeq === undefined) throw validationProblem({ after: ['names no delivery'] });
  const rows = await views.listDeliveries(db, filter, { limit, order, afterSeq });
  return rows.map(toDelivery);
}

export async function getDelivery(db: Kysely<Database>, deliveryId: string): Promise<DeliveryValue> {
  const row = await views.findDelivery(db, deliveryId);
  if (!row) throw notFound('Delivery');
  return toDelivery(row);
}

/**
 * Every terminally failed delivery matching the filter gets a new round of attempts (one statement), or,
 * with dryRun, is only counted: the operator sees how many a retry would reopen before reopening them.
 */
export async function retryFailedDeliveries(
  db: Kysely<Database>,
  body: BulkRetryBodyValue,
  now: Date,
): Promise<BulkRetryResultValue> {
  const { dryRun = false, ...filter } = body;
  if (dryRun) return { dryRun, matched: await views.countFailedDeliveries(db, filter) };
  const matched = await transaction(db, undefined, (tx) => views.reopenFailedDeliveries(tx, filter, now));
  return { dryRun, matched };
}

/** A new round of WEBHOOK_MAX_ATTEMPTS attempts for a terminally failed delivery; the event id stays. */
export async function retryDelivery(db: Kysely<Database>, deliveryId: string, now: Date): Promise<DeliveryValue> {
  const row = await transaction(db, undefined, (tx) => views.reopenFailedDelivery(tx, deliveryId, now));
  if (row) return toDelivery(row);
  const existing = await views.findDelivery(db, deliveryId);
  if (!existing) throw notFound('Delivery');
  throw new Problem(
    'invalid-state',
    `Only a terminally failed delivery can be retried; this one is ${existing.status}.`,
  );
}
