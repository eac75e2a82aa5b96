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
 */
import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { jsonb } from '../db/json.js';
import { prepared } from '../db/prepared-statements.js';
import type { Clock } from '../lib/clock.js';
import type { ResourceObject } from './envelope.js';
import { isUniqueViolation } from '../db/errors.js';
import { Problem, validationProblem } from './problem.js';

export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;

export const IdempotencyKeyHeader = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'Makes the create safe to retry: the same key and body within 24 hours replay the original response.',
  }),
);

export interface CreatedResource {
  /** The new resource's id, for the accessibility check on replay. */
  id: string;
  status: number;
  body: unknown;
  etag: string | undefined;
}

export interface CreateOutcome extends CreatedResource {
  replayed: boolean;
}

export interface IdempotentCreateOptions {
  tenantId: string;
  resourceType: string;
  key: string | undefined;
  payload: unknown;
  /** Whether the resource a completed key points at is still the client's (SPEC rule 5). */
  stillAccessible: (tx: Transaction<Database>, resourceId: string) => Promise<boolean>;
}

const KEY_PATTERN = /^[\x21-\x7e]+$/;

/** JSON with object keys sorted, so that the same payload always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A signed 64-bit advisory lock id for one (tenant, resource type, key). */
function lockId(tenantId: string, resourceType: string, key: string): string {
  return createHash('sha256')
    .update(`${tenantId}\u0000${resourceType}\u0000${key}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/** The key's row as the merged lock-and-lookup statement reads it (all null when there is none). */
interface KeyLookup {
  locked: boolean;
  request_hash: string | null;
  resource_id: string | null;
  response_status: number | null;
  response_body: unknown;
  response_etag: string | null;
  expires_at: Date | null;
}

/** The key was committed by a request racing this one after this one looked it up: run again (it replays). */
class KeyTakenMeanwhile extends Error {}

function pending(): Problem {
  return new Problem(
    'idempotency-pending',
    'A request with this Idempotency-Key is still in progress. Retry later with the same key and body.',
    {
      headers: { 'retry-after': '1' },
    },
  );
}

/** The request's hash for its key, after checking the key's form. */
function checkedRequestHash(key: string, payload: unknown): string {
  if (!KEY_PATTERN.test(key)) {
    throw validationProblem({ 'Idempotency-Key': ['must be 1 to 255 visible ASCII characters'] });
  }
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

/** Whether a key is committed by now (after a create that may have lost a race to it). */
function keyCommitted(db: Kysely<Database>, tenantId: string, resourceType: string, key: string): Promise<boolean> {
  return db
    .selectFrom('idempotency_keys')
    .select('key')
    .where('tenant_id', '=', tenantId)
    .where('resource_type', '=', resourceType)
    .where('key', '=', key)
    .executeTakeFirst()
    .then(
      (row) => row !== undefined,
      () => false,
    );
}

export async function createIdempotently(
  db: Kysely<Database>,
  clock: Clock,
  options: IdempotentCreateOptions,
  create: (tx: Transaction<Database>) => Promise<CreatedResource>,
): Promise<CreateOutcome> {
  const { tenantId, resourceType, key } = options;
  if (key === undefined) {
    const created = await db.transaction().execute(create);
    return { ...created, replayed: false };
  }
  const requestHash = checkedRequestHash(key, options.payload);
  const keyFilter = { tenant_id: tenantId, resource_type: resourceType, key };

  /**
   * One transaction. The lock and the lookup are one statement, so the lookup's snapshot may predate the
   * lock: a request holding the key that commits and unlocks in between is missed. The key's primary key
   * then decides: this request's key insert finds the committed row (or its create fails on what that
   * request created, and the key is found committed afterwards), the transaction rolls back and the whole
   * request runs once more, now seeing the key. Nothing is ever created twice; the common case saves a
   * round trip (docs/decisions.md, Performance and scale-out).
   */
  let missedKey = false;
  const once = () =>
    db.transaction().execute(async (tx) => {
      missedKey = false;
      const lookup = await sql<KeyLookup>`
        select pg_try_advisory_xact_lock(${lockId(tenantId, resourceType, key)}::bigint) as locked,
          k.request_hash, k.resource_id, k.response_status, k.response_body, k.response_etag, k.expires_at
        from (select 1) as one
        left join idempotency_keys k on k.tenant_id = ${tenantId} and k.resource_type = ${resourceType} and k.key = ${key} ${prepared()}`.execute(
        tx,
      );
      const found = lookup.rows[0]!;
      if (!found.locked) throw pending();
      const now = clock.now();

      if (found.resource_id !== null && found.expires_at! > now) {
        if (found.request_hash !== requestHash) {
          throw new Problem(
            'idempotency-conflict',
            'This Idempotency-Key was already used with a different request body. Use a new key for a different request.',
          );
        }
        if (!(await options.stillAccessible(tx, found.resource_id))) {
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
      if (found.resource_id !== null) {
        // Past its replay window the key is free again.
        await tx
          .deleteFrom('idempotency_keys')
          .where('tenant_id', '=', tenantId)
          .where('resource_type', '=', resourceType)
          .where('key', '=', key)
          .execute();
      }

      missedKey = true;
      const created = await create(tx);
      const stored = await tx
        .insertInto('idempotency_keys')
        .values({
          ...keyFilter,
          request_hash: requestHash,
          resource_id: created.id,
          response_status: created.status,
          response_body: jsonb(created.body),
          response_etag: created.etag ?? null,
          completed_at: now,
          expires_at: new Date(now.getTime() + REPLAY_WINDOW_MS),
        })
        .onConflict((oc) => oc.doNothing())
        .modifyEnd(prepared())
        .executeTakeFirst();
      if (Number(stored.numInsertedOrUpdatedRows ?? 0) === 0) throw new KeyTakenMeanwhile();
      return { ...created, replayed: false };
    });

  try {
    return await once();
  } catch (error) {
    if (!(error instanceof KeyTakenMeanwhile) && !(missedKey && (await keyCommitted(db, tenantId, resourceType, key))))
      throw error;
  }
  try {
    return await once();
  } catch (error) {
    // Raced twice in a row: as good as a request still in progress.
    if (error instanceof KeyTakenMeanwhile) throw pending();
    throw error;
  }
}

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

/** A created resource as its create answers it: 201, SPEC's envelope and its ETag. */
function createdResponse(resource: ResourceObject<unknown>): CreatedResource {
  return { id: resource.id, status: 201, body: { data: resource }, etag: resource.meta.etag };
}

/**
 * The create of a resource in SPEC's envelope: `create` makes it in the transaction and returns its
 * resource object, answered 201 with its ETag; with an Idempotency-Key a retry replays that answer
 * while `exists` says the resource is still the tenant's.
 */
export function createResource(
  db: Kysely<Database>,
  clock: Clock,
  request: CreateRequest,
  options: CreateOptions,
  create: (tx: Transaction<Database>) => Promise<ResourceObject<unknown>>,
): Promise<CreateOutcome> {
  const { tenantId } = request.auth;
  return createIdempotently(
    db,
    clock,
    {
      tenantId,
      resourceType: options.resourceType,
      key: request.headers['idempotency-key'],
      payload: request.body,
      stillAccessible: (tx, id) => options.exists(tx, tenantId, id),
    },
    async (tx) => createdResponse(await create(tx)),
  );
}

/**
 * A create that is one INSERT of a row whose every column the caller sets (also those the database would
 * default), so that the response is known before the insert runs.
 */
export interface SingleRowCreate {
  table: keyof Database & string;
  /** Column → value; the same columns in the same order on every call (the statement is prepared). */
  row: Record<string, unknown>;
  /** The unique constraint whose conflict means the resource exists already... */
  uniqueConstraint: string;
  /** ...answered with this problem. */
  duplicate: () => Problem;
  /** The row as the response shows it. */
  resource: ResourceObject<unknown>;
}

/** `insert ... select <row> <from> on conflict do nothing returning 1`: the row, unless a duplicate. */
function insertRow(create: SingleRowCreate, from: RawBuilder<unknown>): RawBuilder<{ one: number }> {
  const columns = Object.keys(create.row);
  return sql<{
    one: number;
  }>`insert into ${sql.table(create.table)} (${sql.join(columns.map((column) => sql.id(column)))})
    select ${sql.join(columns.map((column) => create.row[column]))} ${from}
    on conflict on constraint ${sql.id(create.uniqueConstraint)} do nothing returning 1 as one`;
}

/** Inserts the row alone (no key), or throws its `duplicate` problem when the unique constraint refuses it. */
export async function insertSingleRow(executor: Kysely<Database>, create: SingleRowCreate): Promise<void> {
  if ((await insertRow(create, sql``).execute(executor)).rows.length === 0) throw create.duplicate();
}

/** The first statement of `createRow`, as it found things. */
interface OneStatementResult {
  locked: boolean;
  created: boolean;
  /** A key row (completed or expired) was there: the general path decides. */
  found: boolean;
}

/**
 * `createResource` for a `SingleRowCreate`. With an Idempotency-Key the lock, the lookup, the insert and
 * the snapshot are first tried as one statement, so one transaction of one round trip. It creates only
 * when it holds the lock and no key row is there; every other case goes to `createIdempotently`, whose
 * transaction then decides as it always does:
 * - a key row is there (a replay, a conflict, an expired key);
 * - the key was committed by a racing request after this statement's snapshot, seen either as the key's
 *   primary key refusing the snapshot (the statement and its insert roll back) or as the insert finding
 *   that request's duplicate.
 * Without a key it is the insert alone.
 */
export async function createRow(
  db: Kysely<Database>,
  clock: Clock,
  request: CreateRequest,
  options: CreateOptions,
  create: SingleRowCreate,
): Promise<CreateOutcome> {
  const { tenantId } = request.auth;
  const { resourceType } = options;
  const key = request.headers['idempotency-key'];
  const created = createdResponse(create.resource);
  if (key === undefined) {
    await insertSingleRow(db, create);
    return { ...created, replayed: false };
  }

  const requestHash = checkedRequestHash(key, request.body);
  const now = clock.now();
  try {
    const { rows } = await sql<OneStatementResult>`
      with lock as (select pg_try_advisory_xact_lock(${lockId(tenantId, resourceType, key)}::bigint) as locked),
      found as (select 1 from idempotency_keys where tenant_id = ${tenantId} and resource_type = ${resourceType} and key = ${key}),
      inserted as (${insertRow(create, sql`from lock where lock.locked and not exists (select from found)`)}),
      stored as (
        insert into idempotency_keys (tenant_id, resource_type, key, request_hash, resource_id, response_status, response_body, response_etag, completed_at, expires_at)
        select ${tenantId}, ${resourceType}, ${key}, ${requestHash}, ${created.id}, ${created.status}, ${jsonb(created.body)}, ${created.etag ?? null},
          ${now}, ${new Date(now.getTime() + REPLAY_WINDOW_MS)}
        from inserted)
      select lock.locked, exists (select from inserted) as created, exists (select from found) as found from lock ${prepared()}`.execute(
      db,
    );
    const result = rows[0]!;
    if (!result.locked) throw pending();
    if (result.created) return { ...created, replayed: false };
    if (!result.found && !(await keyCommitted(db, tenantId, resourceType, key))) throw create.duplicate();
  } catch (error) {
    if (!isUniqueViolation(error, 'idempotency_keys_pkey')) throw error;
  }
  return createResource(db, clock, request, options, async (tx) => {
    await insertSingleRow(tx, create);
    return create.resource;
  });
}

/** Writes a create's outcome: the original status, body and ETag, marked when it is a replay. */
export function sendCreateOutcome(reply: FastifyReply, outcome: CreateOutcome) {
  if (outcome.etag) reply.header('etag', outcome.etag);
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(outcome.status).send(outcome.body);
}

/** Deletes keys past their replay window; run periodically by the maintenance loop. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}
