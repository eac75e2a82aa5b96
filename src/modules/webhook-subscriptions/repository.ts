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

/** How many subscriptions the tenant holds, active and inactive (a sandbox listener is none). */
export async function countSubscriptions(db: Executor, tenantId: string): Promise<number> {
  const { count } = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where(SUBSCRIPTIONS_ONLY)
    .executeTakeFirstOrThrow();
  return Number(count);
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
