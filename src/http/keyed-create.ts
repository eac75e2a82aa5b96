/**
 * A create with an Idempotency-Key (http/idempotency.ts decides which path a create takes): the first try
 * of a single row as one statement with the key's lock, lookup and snapshot, and the transaction that
 * replays a completed request, refuses a conflicting one or creates and stores the snapshot.
 */
import { hash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import {
  createWithKeyInOneStatement,
  deleteKey,
  type KeyRef,
  type KeySnapshot,
  keyCommitted,
  lockAndFindKey,
  storeKey,
} from '../db/idempotency-keys.js';
import type { Database } from '../db/schema.js';
import { transaction } from '../db/transaction.js';
import type { Clock } from '../lib/clock.js';
import { type CreateOutcome, created, GuardFailed, type SingleRowCreate } from './create-request.js';
import { Problem } from './problem.js';

export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A key of this request, with the request's hash (computed once, whichever path the create takes). */
export interface KeyedRequest {
  ref: KeyRef;
  requestHash: string;
  stillAccessible: (tx: Transaction<Database>, resourceId: string) => Promise<boolean>;
}

/**
 * A signed 64-bit advisory lock id for one (tenant, resource type, key): the first 8 bytes of its SHA-256,
 * big-endian (read from the hex digest: a third of the time of a Buffer's `readBigInt64BE` here).
 */
export function lockId(tenantId: string, resourceType: string, key: string): string {
  const digest = hash('sha256', `${tenantId}\u0000${resourceType}\u0000${key}`, 'hex');
  return BigInt.asIntN(64, BigInt(`0x${digest.slice(0, 16)}`)).toString();
}

/** The key was committed by a request racing this one after this one looked it up: run again (it replays). */
class KeyTakenMeanwhile extends Error {}

function pending(): Problem {
  return new Problem(
    'idempotency-pending',
    'A request with this Idempotency-Key is still in progress. Retry later with the same key and body.',
    { headers: { 'retry-after': '1' } },
  );
}

function snapshotOf(outcome: CreateOutcome, requestHash: string, now: Date): KeySnapshot {
  return {
    requestHash,
    resourceId: outcome.id,
    status: outcome.status,
    body: outcome.body,
    etag: outcome.etag,
    completedAt: now,
    expiresAt: new Date(now.getTime() + REPLAY_WINDOW_MS),
  };
}

/**
 * The first try of a `SingleRowCreate` with a key: one statement, so one transaction of one round trip. It
 * creates only when it holds the lock, no key row is there and the row's guard holds (`GuardFailed` when it
 * does not: `createResource` then creates the `ReadFirstCreate`'s transactional way); undefined sends every
 * other case to `createInTransaction`, whose transaction decides as it always does:
 * - a key row is there (a replay, a conflict, an expired key);
 * - the key was committed by a racing request after this statement's snapshot, seen either as the key's
 *   primary key refusing the snapshot (the statement and its insert roll back) or as the insert finding
 *   that request's duplicate.
 */
export async function createInOneStatement(
  db: Kysely<Database>,
  clock: Clock,
  keyed: KeyedRequest,
  creation: SingleRowCreate,
): Promise<CreateOutcome | undefined> {
  const outcome = created(creation.resource);
  try {
    const result = await createWithKeyInOneStatement(
      db,
      keyed.ref,
      creation.insert,
      snapshotOf(outcome, keyed.requestHash, clock.now()),
    );
    if (!result.locked) throw pending();
    if (result.created) {
      creation.afterCreate?.(result.companions, db);
      return outcome;
    }
    if (!result.guarded) throw new GuardFailed();
    if (!result.found && !(await keyCommitted(db, keyed.ref))) throw creation.duplicate();
  } catch (error) {
    if (!isUniqueViolation(error, 'idempotency_keys_pkey')) throw error;
  }
  return undefined;
}

/**
 * One transaction that (1) takes the key's advisory lock and reads the key (one statement), (2) replays a
 * completed request or refuses a conflicting one, else (3) creates and stores the response snapshot.
 *
 * The lock and the lookup are one statement, so the lookup's snapshot may predate the lock: a request
 * holding the key that commits and unlocks in between is missed. The key's primary key then decides: this
 * request's key insert finds the committed row (or its create fails on what that request created, and the
 * key is found committed afterwards), the transaction rolls back and the whole request runs once more, now
 * seeing the key. Nothing is ever created twice; the common case saves a round trip (docs/decisions.md,
 * Performance and scale-out).
 */
export async function createInTransaction(
  db: Kysely<Database>,
  clock: Clock,
  keyed: KeyedRequest,
  create: (tx: Transaction<Database>) => Promise<CreateOutcome>,
): Promise<CreateOutcome> {
  let missedKey = false;
  const once = () =>
    transaction(db, keyed.ref.tenantId, async (tx) => {
      missedKey = false;
      const found = await lockAndFindKey(tx, keyed.ref);
      if (!found.locked) throw pending();
      const now = clock.now();

      if (found.resource_id !== null && found.expires_at! > now) {
        if (found.request_hash !== keyed.requestHash) {
          throw new Problem(
            'idempotency-conflict',
            'This Idempotency-Key was already used with a different request body. Use a new key for a different request.',
          );
        }
        if (!(await keyed.stillAccessible(tx, found.resource_id))) {
          throw new Problem('not-found', 'The resource created with this Idempotency-Key is no longer accessible.');
        }
        return {
          id: found.resource_id,
          status: found.response_status!,
          body: found.response_body,
          etag: found.response_etag ?? undefined,
          replayed: true,
        };
      }
      // Past its replay window the key is free again.
      if (found.resource_id !== null) await deleteKey(tx, keyed.ref);

      missedKey = true;
      const outcome = await create(tx);
      if (!(await storeKey(tx, keyed.ref, snapshotOf(outcome, keyed.requestHash, now)))) throw new KeyTakenMeanwhile();
      return outcome;
    });

  try {
    return await once();
  } catch (error) {
    if (!(error instanceof KeyTakenMeanwhile) && !(missedKey && (await keyCommitted(db, keyed.ref)))) throw error;
  }
  try {
    return await once();
  } catch (error) {
    // Raced twice in a row: as good as a request still in progress.
    if (error instanceof KeyTakenMeanwhile) throw pending();
    throw error;
  }
}
