/**
 * The rules of sandbox webhook listeners (issue 18): who may open one (scope webhooks:write, while the
 * tenant has webhook access, as for a subscription), how many (LISTENER_CAP open ones per tenant), how
 * long one lives (while its stream is open, plus the grace period), and what closing one does (its
 * pending deliveries fail terminally with "listener closed").
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { transaction } from '../../db/transaction.js';
import { isoTime } from '../../http/envelope.js';
import { notFound, Problem } from '../../http/problem.js';
import { newId, newSecret } from '../../lib/ids.js';
import { EVENT_TYPES } from '../outbox/types.js';
import * as listeners from './repository.js';
import type { ListenerCreate, ListenerValue } from './schemas.js';
import { assertWebhookAccess } from '../webhook-subscriptions/service.js';
import { sealSecret } from '../outbox/signing.js';

/** Open listeners per tenant (a developer's few terminals, not a delivery channel). */
export const LISTENER_CAP = 5;

export interface ListenerDeps {
  db: Kysely<Database>;
  /** AES-256-GCM key of secrets at rest. */
  encryptionKey: Buffer;
  graceMs: number;
}

export function streamPath(id: string): string {
  return `/api/v1/sandbox/webhook-listeners/${id}/stream`;
}

/** A new listener with the secret given, else a fresh one; it lives the grace period until its first stream connects. */
export async function createListener(
  deps: ListenerDeps,
  tenantId: string,
  input: ListenerCreate,
  now: Date,
): Promise<ListenerValue> {
  await assertWebhookAccess(deps.db, tenantId);
  const id = newId('whl');
  const secret = input.secret ?? newSecret('whsec');
  const eventTypes = input.eventTypes ?? [...EVENT_TYPES];
  await transaction(deps.db, tenantId, async (tx) => {
    await listeners.lockTenantListeners(tx, tenantId);
    if ((await listeners.countLiveListeners(tx, tenantId, now)) >= LISTENER_CAP) {
      throw new Problem(
        'listener-limit-reached',
        `Your client already has ${LISTENER_CAP} open webhook listeners. Stop one (Ctrl-C in its svc listen, or DELETE it) or wait for one to close.`,
        // A 422's errors member names what is wrong: here, the listeners already open.
        { errors: { listeners: [`at most ${LISTENER_CAP} may be open at once`] } },
      );
    }
    await listeners.insertListener(tx, {
      id,
      tenantId,
      eventTypes,
      secretSealed: sealSecret(deps.encryptionKey, id, secret),
      aliveUntil: new Date(now.getTime() + deps.graceMs),
      now,
    });
  });
  return {
    id,
    eventTypes,
    secret,
    streamPath: streamPath(id),
    graceSeconds: Math.ceil(deps.graceMs / 1000),
    createdAt: isoTime(now),
  };
}

/** Closes the tenant's listener (idempotent while it exists); 404 when it never existed. Returns whether it closed now. */
export async function closeListener(db: Kysely<Database>, tenantId: string, id: string, now: Date): Promise<boolean> {
  if (!(await listeners.findListener(db, tenantId, id))) throw notFound('Webhook listener');
  const closed = await transaction(db, tenantId, (tx) => listeners.closeListeners(tx, { tenantId, id }, now));
  return closed.length > 0;
}

/**
 * Refuses a stream for a listener that is not the tenant's, is closed or past its grace (404), or while
 * the tenant has no webhook access (403); checked before the WebSocket upgrade.
 */
export async function assertStreamable(db: Kysely<Database>, tenantId: string, id: string, now: Date): Promise<void> {
  const listener = await listeners.findListener(db, tenantId, id);
  if (!listener || listener.state === 'closed' || listener.alive_until < now) {
    throw new Problem(
      'not-found',
      'Webhook listener was not found: it does not exist, or it closed (stopped, or its grace period ran out). Open a new one.',
    );
  }
  await assertWebhookAccess(db, tenantId);
}
