/**
 * Subscription rules (SPEC: Webhook subscriptions endpoint rules, States and transitions): creation,
 * partial update with rotation, upgrade and the signing-version race, the destination check on every write,
 * the tenant's cap on active subscriptions, and the operator's view of subscriptions with their health.
 */
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Database, WebhookSubscriptionRow, WebhookSubscriptionsTable } from '../../db/schema.js';
import { transaction } from '../../db/transaction.js';
import { isoTime, isoTimeOrNull } from '../../http/envelope.js';
import { notFound, Problem, validationProblem } from '../../http/problem.js';
import { newId } from '../../lib/ids.js';
import { findTenant, lockTenant } from '../tenants/service.js';
import type { DestinationPolicy } from '../outbox/destination-policy.js';
import { type DeliveryCounts, deliveryCountsBySubscription } from '../outbox/operator-deliveries.js';
import { sealSecret } from '../outbox/signing.js';
import * as repository from './repository.js';
import type {
  AdminSubscriptionCreate,
  SubscriptionCreate,
  SubscriptionPatch,
  SubscriptionValue,
  SubscriptionWithHealthValue,
} from './schemas.js';

export interface SubscriptionDeps {
  db: Kysely<Database>;
  destinations: DestinationPolicy;
  /** AES-256-GCM key of secrets at rest. */
  encryptionKey: Buffer;
}

export function toSubscription(row: WebhookSubscriptionRow): SubscriptionValue {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    targetUrl: row.target_url,
    description: row.description,
    eventTypes: row.event_types as SubscriptionValue['eventTypes'],
    isActive: row.is_active,
    signingVersion: row.signing_version,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

export function toSubscriptionWithHealth(
  row: WebhookSubscriptionRow,
  recent: DeliveryCounts = { succeeded: 0, failed: 0, pending: 0 },
): SubscriptionWithHealthValue {
  const settled = recent.succeeded + recent.failed;
  return {
    ...toSubscription(row),
    health: {
      consecutiveFailures: row.consecutive_failures,
      failingSince: isoTimeOrNull(row.failing_since),
      lastSuccessAt: isoTimeOrNull(row.last_success_at),
      lastFailureAt: isoTimeOrNull(row.last_failure_at),
      lastError: row.last_error,
      deactivatedReason: row.deactivated_reason,
      last24Hours: { ...recent, successRate: settled === 0 ? null : recent.succeeded / settled },
    },
  };
}

/** 422 naming targetUrl for a policy violation; 503 for a temporary DNS failure. */
export async function assertDestinationAllowed(destinations: DestinationPolicy, targetUrl: string): Promise<void> {
  const decision = await destinations.check(targetUrl);
  if (decision.kind === 'violation') {
    throw validationProblem(
      { targetUrl: [decision.message] },
      `The targetUrl is not an allowed webhook destination: ${decision.message}.`,
    );
  }
  if (decision.kind === 'unavailable') {
    throw new Problem('service-unavailable', `The targetUrl could not be checked: ${decision.message}.`, {
      headers: { 'retry-after': '5' },
    });
  }
}

export async function assertWebhookAccess(db: Kysely<Database>, tenantId: string): Promise<void> {
  const tenant = await findTenant(db, tenantId);
  if (!tenant?.webhook_access) {
    throw new Problem('forbidden', 'Webhook access is not enabled for your client. Ask the operator to enable it.');
  }
}

/**
 * Inactive subscriptions a tenant may keep beside its active cap. There is no delete (SPEC), so without a
 * bound a tenant could create and switch off subscriptions without end, and every list of them (its own, the
 * operator's and the console's, none paged) would grow with it; an inactive one can be reused instead (a
 * PATCH of its targetUrl, eventTypes and secret, and isActive true).
 */
export const INACTIVE_SUBSCRIPTIONS_KEPT = 100;

/**
 * Runs `write` (which adds one active subscription, a new one with `creating`) only if the tenant has room
 * for one more: 422 subscription-limit-reached otherwise, for its active cap or, for a new one, for the
 * subscriptions it holds in all (its active cap and `INACTIVE_SUBSCRIPTIONS_KEPT`). The tenant's row stays
 * locked until the transaction ends, so concurrent creates and activations of one tenant are counted one
 * after the other (two creates at 15 of 16 cannot both pass). `activating` is left out of the count: the
 * subscription being switched on.
 */
async function withRoomForActiveSubscription<T>(
  db: Kysely<Database>,
  tenantId: string,
  write: (tx: Transaction<Database>) => Promise<T>,
  room: { activating: string } | { creating: true },
): Promise<T> {
  return transaction(db, tenantId, async (tx) => {
    const tenant = await lockTenant(tx, tenantId);
    if (!tenant) throw notFound('Tenant');
    const exceptId = 'activating' in room ? room.activating : undefined;
    const { active, held } = await repository.subscriptionCounts(tx, tenantId, exceptId);
    const cap = tenant.max_active_subscriptions;
    const counts = { maxActiveSubscriptions: cap, activeSubscriptions: active };
    if (active >= cap) {
      throw new Problem(
        'subscription-limit-reached',
        `Your client has ${active} active webhook subscriptions and may have at most ${cap}. Deactivate one (PATCH isActive false) before creating or activating another, or ask the operator to raise the limit.`,
        { extensions: counts },
      );
    }
    if ('creating' in room) {
      const most = cap + INACTIVE_SUBSCRIPTIONS_KEPT;
      if (held >= most) {
        throw new Problem(
          'subscription-limit-reached',
          `Your client holds ${held} webhook subscriptions, active and inactive, and may hold at most ${most}; there is no delete. Reuse an inactive one instead: PATCH its targetUrl, eventTypes and secret, and isActive true.`,
          { extensions: { ...counts, maxSubscriptions: most, subscriptions: held } },
        );
      }
    }
    return write(tx);
  });
}

/** The secret is signed over as UTF-8; a lone surrogate has no UTF-8 form, so it could never be verified. */
function assertSecretEncodable(secret: string | undefined): void {
  if (secret !== undefined && /\p{Cs}/u.test(secret)) {
    throw validationProblem({ secret: ['must be valid Unicode text (it contains an unpaired surrogate)'] });
  }
}

export async function listSubscriptions(db: Kysely<Database>, tenantId: string): Promise<SubscriptionValue[]> {
  return (await repository.listSubscriptions(db, tenantId)).map(toSubscription);
}

/** A new active v1 subscription: 422 subscription-limit-reached when the tenant's cap is reached. */
export async function createSubscription(
  deps: SubscriptionDeps,
  tenantId: string,
  input: SubscriptionCreate,
  now: Date,
): Promise<SubscriptionValue> {
  await assertWebhookAccess(deps.db, tenantId);
  assertSecretEncodable(input.secret);
  await assertDestinationAllowed(deps.destinations, input.targetUrl);
  const id = newId('whsub');
  const row = await withRoomForActiveSubscription(
    deps.db,
    tenantId,
    (tx) =>
      repository.insertSubscription(tx, {
        id,
        tenant_id: tenantId,
        target_url: input.targetUrl,
        description: input.description ?? null,
        event_types: input.eventTypes,
        is_active: true,
        signing_version: 'v1',
        secret_sealed: sealSecret(deps.encryptionKey, id, input.secret),
        created_at: now,
        updated_at: now,
      }),
    { creating: true },
  );
  return toSubscription(row);
}

/**
 * Operator: a subscription carried over from before v1, signed with the server-held legacy key. It counts
 * towards the tenant's cap on active subscriptions, but the operator is never refused for it.
 */
export async function createLegacySubscription(
  deps: Omit<SubscriptionDeps, 'encryptionKey'>,
  tenantId: string,
  input: AdminSubscriptionCreate,
  now: Date,
): Promise<SubscriptionValue> {
  if (!(await findTenant(deps.db, tenantId))) throw notFound('Tenant');
  await assertDestinationAllowed(deps.destinations, input.targetUrl);
  const row = await repository.insertSubscription(deps.db, {
    id: newId('whsub'),
    tenant_id: tenantId,
    target_url: input.targetUrl,
    description: input.description ?? null,
    event_types: input.eventTypes,
    is_active: true,
    signing_version: 'legacy',
    secret_sealed: null,
    created_at: now,
    updated_at: now,
  });
  return toSubscription(row);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}

/**
 * Applies the supplied fields. Rotation and metadata changes keep the signing version; legacy → v1 needs
 * an explicit secret; v1 → legacy is refused. The destination is checked again (outside any transaction:
 * DNS can be slow), except for a patch that only deactivates, so that stopping deliveries always works.
 * The update is conditional on the signing version read at the start: a stale update racing a
 * signing-version change is 409 signing-version-conflict. Switching isActive on needs room under the
 * tenant's cap on active subscriptions (422 subscription-limit-reached).
 */
export async function patchSubscription(
  deps: SubscriptionDeps,
  tenantId: string,
  id: string,
  patch: SubscriptionPatch,
  now: Date,
): Promise<SubscriptionValue> {
  const current = await repository.findSubscription(deps.db, tenantId, id);
  if (!current) throw notFound('Webhook subscription');
  // Switching a subscription off is always the tenant's to do: without webhook access its ticket.created
  // events are still delivered (SPEC publishes them whatever the access), and without this it could not stop
  // them. It sends nothing, so neither the access nor the destination rules are asked.
  const onlyDeactivates = Object.keys(patch).length === 1 && patch.isActive === false;
  if (!onlyDeactivates) await assertWebhookAccess(deps.db, tenantId);
  assertSecretEncodable(patch.secret);

  const changes: Updateable<WebhookSubscriptionsTable> = {};
  if (patch.signingVersion === 'legacy' && current.signing_version === 'v1') {
    throw validationProblem({ signingVersion: ['cannot be changed from v1 to legacy: downgrade is not supported'] });
  }
  if (patch.signingVersion === 'v1' && current.signing_version === 'legacy') {
    if (patch.secret === undefined) {
      throw validationProblem(
        { secret: ['is required to upgrade signingVersion from legacy to v1'] },
        'Upgrading to v1 needs an explicit secret in the same request.',
      );
    }
    changes.signing_version = 'v1';
  }
  if (patch.secret !== undefined) changes.secret_sealed = sealSecret(deps.encryptionKey, id, patch.secret);
  if (patch.targetUrl !== undefined && patch.targetUrl !== current.target_url) changes.target_url = patch.targetUrl;
  if (patch.description !== undefined && patch.description !== current.description)
    changes.description = patch.description;
  if (patch.eventTypes !== undefined && !sameList(patch.eventTypes, current.event_types))
    changes.event_types = patch.eventTypes;
  if (patch.isActive !== undefined && patch.isActive !== current.is_active) {
    changes.is_active = patch.isActive;
    // A reactivated subscription starts a fresh health record (and loses any automatic deactivation note).
    if (patch.isActive)
      Object.assign(changes, { consecutive_failures: 0, failing_since: null, deactivated_reason: null });
  }

  if (!onlyDeactivates) await assertDestinationAllowed(deps.destinations, patch.targetUrl ?? current.target_url);
  if (Object.keys(changes).length === 0) return toSubscription(current);

  const update = (db: Kysely<Database>) =>
    repository.updateSubscriptionIfSigningVersion(db, tenantId, id, current.signing_version, {
      ...changes,
      updated_at: now,
    });
  // Switching one on needs room under the cap; every other change (deactivating included) never does.
  const updated =
    changes.is_active === true
      ? await withRoomForActiveSubscription(deps.db, tenantId, update, { activating: id })
      : await update(deps.db);
  if (!updated) {
    throw new Problem(
      'signing-version-conflict',
      `The subscription's signing version changed from ${current.signing_version} while this update was in flight. List the subscriptions and repeat the update if it is still needed.`,
    );
  }
  return toSubscription(updated);
}

const DAY_MS = 86_400_000;

export async function listSubscriptionsWithHealth(
  db: Kysely<Database>,
  tenantId: string,
  now: Date,
): Promise<SubscriptionWithHealthValue[]> {
  if (!(await findTenant(db, tenantId))) throw notFound('Tenant');
  const [rows, recent] = await Promise.all([
    repository.listSubscriptions(db, tenantId),
    deliveryCountsBySubscription(db, tenantId, new Date(now.getTime() - DAY_MS)),
  ]);
  return rows.map((row) => toSubscriptionWithHealth(row, recent.get(row.id)));
}
