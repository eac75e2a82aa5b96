/**
 * Webhook subscriptions in the database: the client's and the operator's rows of webhook_subscriptions
 * (a sandbox listener's target shares the table and is left out here, SUBSCRIPTIONS_ONLY). Every function
 * takes the tenant.
 */
import type { Updateable } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { WebhookSubscriptionRow, WebhookSubscriptionsTable } from '../../db/schema.js';
import { SUBSCRIPTIONS_ONLY } from '../outbox/targets.js';

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

/**
 * How many subscriptions the tenant holds, active and inactive, and how many of them are active leaving out
 * `exceptId` (one about to be activated), in one statement. A sandbox listener is none: it does not count.
 */
export async function subscriptionCounts(
  db: Executor,
  tenantId: string,
  exceptId?: string,
): Promise<{ active: number; held: number }> {
  const { active, held } = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => [
      eb.fn
        .countAll<number>()
        .filterWhere((f) =>
          f.and([f('is_active', '=', true), ...(exceptId === undefined ? [] : [f('id', '<>', exceptId)])]),
        )
        .as('active'),
      eb.fn.countAll<number>().as('held'),
    ])
    .where('tenant_id', '=', tenantId)
    .where(SUBSCRIPTIONS_ONLY)
    .executeTakeFirstOrThrow();
  return { active: Number(active), held: Number(held) };
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
