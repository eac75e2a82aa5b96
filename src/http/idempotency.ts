/**
 * Idempotent creates (SPEC: Idempotent creates). A create with an Idempotency-Key runs in one
 * transaction that (1) takes a transaction-scoped advisory lock on the key and reads the key (one
 * statement), (2) replays a completed request or refuses a conflicting one, else (3) creates the resource
 * and stores the response snapshot, the key's primary key settling a race the lookup missed.
 *
 * Because the lock and the snapshot live in the same transaction as the resource, a key is never left
 * half-done: a crash or error rolls everything back and the same key can simply be retried. A second
 * request arriving while the first holds the lock gets 409 idempotency-pending instead of waiting.
 *
 * A create that is one INSERT of a row known beforehand (`SingleRowCreate`) first tries all of that as
 * one statement in its own transaction: lock, lookup, insert and snapshot in a single round trip instead
 * of five. Anything but a plain first create (a key found, a race) falls back to the transaction above.
 *
 * The protocol lives here; the key table's SQL is in src/db/idempotency-keys.ts, a row's insert in the
 * repository that describes it (src/db/single-row-insert.ts).
 */
import { createHash } from 'node:crypto';
import { afterCommit, transaction } from '../db/transaction.js';
import type { FastifyReply } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { Type } from 'typebox';
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
import { insertSingleRow, type SingleRowInsert } from '../db/single-row-insert.js';
import { canonicalJson } from '../lib/canonical-json.js';
import type { Clock } from '../lib/clock.js';
import type { ResourceObject } from './envelope.js';
import { Problem } from './problem.js';

export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The key's format is the schema's: validation, the document and the error message come from here. */
export const IdempotencyKeyHeader = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x21-\\x7e]+$',
    description:
      '1 to 255 visible ASCII characters; the same key and body within 24 hours replay the original response',
  }),
);

/** What `createResource` reads from a create request: the caller's tenant, its Idempotency-Key and body. */
export interface CreateRequest {
  auth: { tenantId: string };
  headers: { 'idempotency-key'?: string };
  body: unknown;
}

/** The resource type a create's keys belong to, and whether a created resource is still the tenant's. */
export interface CreateOptions {
  resourceType: string;
  exists: (tx: Transaction<Database>, tenantId: string, id: string) => Promise<boolean>;
}

/**
 * A create that is one INSERT of a row known beforehand (its repository describes the row, and the writes
 * that go with it as companions): tried as one statement with the key's lock, lookup and snapshot.
 */
export interface SingleRowCreate {
  insert: SingleRowInsert;
  /** The problem a duplicate (the insert's unique constraint refusing it) is answered with. */
  duplicate: () => Problem;
  /** The row as the response shows it. */
  resource: ResourceObject<unknown>;
  /** Run once the row is committed, with its companions' outcome (the deliveries queued, to start them, say). */
  afterCreate?: (companions: unknown, db: Kysely<Database>) => void;
  /** Run once the create has ended, whatever its outcome (after `afterCreate` when it created). */
  settled?: () => void;
}

/** Any work in the create's transaction, returning the resource. */
export type TransactionalCreate = (tx: Transaction<Database>) => Promise<ResourceObject<unknown>>;

/**
 * A create that reads first what its row needs and is then one row. `prepare` reads outside any
 * transaction (taking no locks, as the transaction's own reads at READ COMMITTED would not), or takes what
 * it read for an earlier create, and gives the `SingleRowCreate`, or undefined when its reads found
 * anything to refuse: `inTransaction` then creates the usual way, after the key is checked, so that a
 * retry of a completed request still replays and a refusal is answered exactly as it always is. The row's
 * guard (`SingleRowInsert.guard`) checks in its statement that what it was built from still holds; when it
 * does not, nothing was written and `inTransaction` creates instead.
 */
export interface ReadFirstCreate {
  prepare: (db: Kysely<Database>) => Promise<SingleRowCreate | undefined>;
  inTransaction: TransactionalCreate;
}

/** How a resource is created. */
export type Creation = SingleRowCreate | ReadFirstCreate | TransactionalCreate;

export interface CreateOutcome {
  /** The resource's id, for the accessibility check on replay. */
  id: string;
  status: number;
  body: unknown;
  etag: string | undefined;
  replayed: boolean;
}

/** A key of this request, with the request's hash (computed once, whichever path the create takes). */
interface KeyedRequest {
  ref: KeyRef;
  requestHash: string;
  stillAccessible: (tx: Transaction<Database>, resourceId: string) => Promise<boolean>;
}

/** A signed 64-bit advisory lock id for one (tenant, resource type, key). */
function lockId(tenantId: string, resourceType: string, key: string): string {
  return createHash('sha256')
    .update(`${tenantId}\u0000${resourceType}\u0000${key}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/** The key was committed by a request racing this one after this one looked it up: run again (it replays). */
class KeyTakenMeanwhile extends Error {}

/** A row's guard did not hold: what it was built from changed, and nothing was written. */
class GuardFailed extends Error {}

function pending(): Problem {
  return new Problem(
    'idempotency-pending',
    'A request with this Idempotency-Key is still in progress. Retry later with the same key and body.',
    { headers: { 'retry-after': '1' } },
  );
}

/** The answer of a create: 201, the envelope and its ETag. */
function created(resource: ResourceObject<unknown>): CreateOutcome {
  return { id: resource.id, status: 201, body: { data: resource }, etag: resource.meta.etag, replayed: false };
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
 * The create of a resource: 201 with its ETag; with an Idempotency-Key a retry within the replay window
 * replays that answer while `exists` says the resource is still the tenant's.
 */
export async function createResource(
  db: Kysely<Database>,
  clock: Clock,
  request: CreateRequest,
  options: CreateOptions,
  creation: Creation,
): Promise<CreateOutcome> {
  const call: CreateCall = { db, clock, request, options };
  if (!('prepare' in creation)) return createSettled(call, creation);
  const prepared = await creation.prepare(db);
  if (prepared) {
    try {
      return await createSettled(call, prepared);
    } catch (error) {
      if (!(error instanceof GuardFailed)) throw error;
    }
  }
  return createResolved(call, creation.inTransaction);
}

/** What one create is asked with. */
interface CreateCall {
  db: Kysely<Database>;
  clock: Clock;
  request: CreateRequest;
  options: CreateOptions;
}

/** `createResolved`, then the single row's `settled` however it ended. */
async function createSettled(
  call: CreateCall,
  creation: SingleRowCreate | TransactionalCreate,
): Promise<CreateOutcome> {
  try {
    return await createResolved(call, creation);
  } finally {
    if (typeof creation !== 'function') creation.settled?.();
  }
}

async function createResolved(
  { db, clock, request, options }: CreateCall,
  creation: SingleRowCreate | TransactionalCreate,
): Promise<CreateOutcome> {
  const { tenantId } = request.auth;
  const create =
    typeof creation === 'function'
      ? async (tx: Transaction<Database>) => created(await creation(tx))
      : (tx: Transaction<Database>) => insertCreation(tx, creation);
  const key = request.headers['idempotency-key'];
  if (key === undefined) {
    // A single row needs no transaction of its own.
    return typeof creation === 'function' ? transaction(db, create) : insertCreation(db, creation);
  }
  const keyed: KeyedRequest = {
    ref: { tenantId, resourceType: options.resourceType, key, lockId: lockId(tenantId, options.resourceType, key) },
    requestHash: createHash('sha256').update(canonicalJson(request.body)).digest('hex'),
    stillAccessible: (tx, id) => options.exists(tx, tenantId, id),
  };
  if (typeof creation !== 'function') {
    const outcome = await createInOneStatement(db, clock, keyed, creation);
    if (outcome) return outcome;
  }
  return createInTransaction(db, clock, keyed, create);
}

/** The row (and its companions) on `executor`: the database itself, or a transaction of `transaction()`. */
async function insertCreation(
  executor: Kysely<Database> | Transaction<Database>,
  creation: SingleRowCreate,
): Promise<CreateOutcome> {
  const inserted = await insertSingleRow(executor, creation.insert);
  if (!inserted.guarded) throw new GuardFailed();
  if (!inserted.created) throw creation.duplicate();
  const { afterCreate } = creation;
  if (afterCreate) {
    const effect = (db: Kysely<Database>) => afterCreate(inserted.companions, db);
    if (executor.isTransaction) afterCommit(executor as Transaction<Database>, effect);
    else effect(executor);
  }
  return created(creation.resource);
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
async function createInOneStatement(
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
async function createInTransaction(
  db: Kysely<Database>,
  clock: Clock,
  keyed: KeyedRequest,
  create: (tx: Transaction<Database>) => Promise<CreateOutcome>,
): Promise<CreateOutcome> {
  let missedKey = false;
  const once = () =>
    transaction(db, async (tx) => {
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

/** Writes a create's outcome: the original status, body and ETag, marked when it is a replay. */
export function sendCreateOutcome(reply: FastifyReply, outcome: CreateOutcome) {
  if (outcome.etag) reply.header('etag', outcome.etag);
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(outcome.status).send(outcome.body);
}
