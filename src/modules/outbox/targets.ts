/**
 * The outbox's delivery targets: the rows of webhook_subscriptions. A target is either a client's webhook
 * subscription (webhook-subscriptions/) or a sandbox webhook listener's stream (webhook-listeners/), whose
 * row's id starts with whl_; the worker tells them apart by that prefix alone.
 */
import { type SqlBool, sql } from 'kysely';

/** Every listener id starts so (checked by the table); a subscription id never does. */
export const LISTENER_ID_PREFIX = 'whl_';

export function isListenerId(id: string): boolean {
  return id.startsWith(LISTENER_ID_PREFIX);
}

/**
 * Subscriptions proper: a sandbox webhook listener's delivery target is a row of the same table, which is
 * no subscription to the client nor to the operator.
 */
export const SUBSCRIPTIONS_ONLY = sql<SqlBool>`webhook_subscriptions.id not like 'whl\\_%'`;
