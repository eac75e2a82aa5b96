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
 * The protocol's entry is here, its two keyed paths in http/keyed-create.ts and what a create is asked and
 * answers in http/create-request.ts; the key table's SQL is in src/db/idempotency-keys.ts, a row's insert in
 * the repository that describes it (src/db/single-row-insert.ts).
 */
import { hash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { Type } from 'typebox';
import type { Database } from '../db/schema.js';
import { insertSingleRow } from '../db/single-row-insert.js';
import { afterCommit, transaction } from '../db/transaction.js';
import { canonicalJson } from '../lib/canonical-json.js';
import type { Clock } from '../lib/clock.js';
import {
  type CreateOptions,
  type CreateOutcome,
  type CreateRequest,
  type Creation,
  created,
  GuardFailed,
  type SingleRowCreate,
  type TransactionalCreate,
} from './create-request.js';
import type { ProblemSlug } from './problem-types.js';
import { createInOneStatement, createInTransaction, type KeyedRequest, lockId } from './keyed-create.js';

export type {
  CreateOptions,
  CreateOutcome,
  CreateRequest,
  Creation,
  ReadFirstCreate,
  SingleRowCreate,
  TransactionalCreate,
} from './create-request.js';
export { REPLAY_WINDOW_MS } from './keyed-create.js';

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

/** What a create with an Idempotency-Key can answer 409 with, whatever it creates (its document lists them). */
export const KEYED_CREATE_CONFLICTS: readonly ProblemSlug[] = ['idempotency-conflict', 'idempotency-pending'];

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
      : (tx: Transaction<Database>) => insertCreation(tx, tenantId, creation);
  const key = request.headers['idempotency-key'];
  if (key === undefined) {
    // A single row needs no transaction of its own.
    return typeof creation === 'function' ? transaction(db, tenantId, create) : insertCreation(db, tenantId, creation);
  }
  const keyed: KeyedRequest = {
    ref: { tenantId, resourceType: options.resourceType, key, lockId: lockId(tenantId, options.resourceType, key) },
    requestHash: hash('sha256', canonicalJson(request.body), 'hex'),
    stillAccessible: (tx, id) => options.exists(tx, tenantId, id),
  };
  if (typeof creation !== 'function') {
    const outcome = await createInOneStatement(db, clock, keyed, creation);
    if (outcome) return outcome;
  }
  return createInTransaction(db, clock, keyed, create);
}

/** The tenant's row (and its companions) on `executor`: the database itself, or a transaction of `transaction()`. */
async function insertCreation(
  executor: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  creation: SingleRowCreate,
): Promise<CreateOutcome> {
  const inserted = await insertSingleRow(executor, tenantId, creation.insert);
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

/** Writes a create's outcome: the original status, body and ETag, marked when it is a replay. */
export function sendCreateOutcome(reply: FastifyReply, outcome: CreateOutcome) {
  if (outcome.etag) reply.header('etag', outcome.etag);
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(outcome.status).send(outcome.body);
}
