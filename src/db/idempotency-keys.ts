/**
 * The `idempotency_keys` table: what the idempotent-create protocol (src/http/idempotency.ts) stores and
 * reads. Every statement names the tenant; a key is (tenant, resource type, key).
 */
import { type CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import type { Executor } from './executor.js';
import { jsonb } from './json.js';
import { prepared } from './prepared-statements.js';
import type { Database } from './schema.js';
import { runInTurnBatch } from './turn-batches.js';
import {
  CompiledShapes,
  companionsOutcome,
  guardHolds,
  insertedWithCompanions,
  insertParameters,
  insertShape,
  listedInOrder,
  type SingleRowInsert,
} from './single-row-insert.js';

export interface KeyRef {
  tenantId: string;
  resourceType: string;
  key: string;
  /** The transaction-scoped advisory lock taken for the key (a signed 64-bit id, as text). */
  lockId: string;
}

/** The answer a completed key replays. */
export interface KeySnapshot {
  requestHash: string;
  resourceId: string;
  status: number;
  body: unknown;
  etag: string | undefined;
  completedAt: Date;
  expiresAt: Date;
}

/** The key's row as the merged lock-and-lookup statement reads it (all null when there is none). */
export interface LockedKey {
  locked: boolean;
  request_hash: string | null;
  resource_id: string | null;
  response_status: number | null;
  response_body: unknown;
  response_etag: string | null;
  expires_at: Date | null;
}

/** Takes the key's lock (without waiting) and reads the key, as one statement. */
export async function lockAndFindKey(tx: Transaction<Database>, ref: KeyRef): Promise<LockedKey> {
  const lookup = await sql<LockedKey>`
    select pg_try_advisory_xact_lock(${ref.lockId}::bigint) as locked,
      k.request_hash, k.resource_id, k.response_status, k.response_body, k.response_etag, k.expires_at
    from (select 1) as one
    left join idempotency_keys k on k.tenant_id = ${ref.tenantId} and k.resource_type = ${ref.resourceType} and k.key = ${ref.key} ${prepared()}`.execute(
    tx,
  );
  return lookup.rows[0]!;
}

export async function deleteKey(tx: Transaction<Database>, ref: KeyRef): Promise<void> {
  await tx
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', ref.tenantId)
    .where('resource_type', '=', ref.resourceType)
    .where('key', '=', ref.key)
    .execute();
}

/** Stores the completed key; false when a racing request committed the same key first. */
export async function storeKey(tx: Transaction<Database>, ref: KeyRef, snapshot: KeySnapshot): Promise<boolean> {
  const stored = await tx
    .insertInto('idempotency_keys')
    .values({
      tenant_id: ref.tenantId,
      resource_type: ref.resourceType,
      key: ref.key,
      request_hash: snapshot.requestHash,
      resource_id: snapshot.resourceId,
      response_status: snapshot.status,
      response_body: jsonb(snapshot.body),
      response_etag: snapshot.etag ?? null,
      completed_at: snapshot.completedAt,
      expires_at: snapshot.expiresAt,
    })
    .onConflict((oc) => oc.doNothing())
    .modifyEnd(prepared())
    .executeTakeFirst();
  return Number(stored.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Whether the key is committed by now (after a create that may have lost a race to it); false on error. */
export function keyCommitted(db: Executor, ref: KeyRef): Promise<boolean> {
  return db
    .selectFrom('idempotency_keys')
    .select('key')
    .where('tenant_id', '=', ref.tenantId)
    .where('resource_type', '=', ref.resourceType)
    .where('key', '=', ref.key)
    .executeTakeFirst()
    .then(
      (row) => row !== undefined,
      () => false,
    );
}

/** What the one-statement create found. */
export interface OneStatementCreate {
  locked: boolean;
  created: boolean;
  /** A key row (completed or expired) was there: the transactional path decides. */
  found: boolean;
  /** The insert's guard held (always true without one): when it did not, nothing was written. */
  guarded: boolean;
  /** The insert's companions' outcome (null without companions). */
  companions: unknown;
}

/** The one-statement create of `insert`, as Kysely builds it. */
function createWithKeyStatement(ref: KeyRef, insert: SingleRowInsert, snapshot: KeySnapshot) {
  return sql<OneStatementCreate>`
    with lock as (select pg_try_advisory_xact_lock(${ref.lockId}::bigint) as locked),
    found as (select 1 from idempotency_keys where tenant_id = ${ref.tenantId} and resource_type = ${ref.resourceType} and key = ${ref.key}),
    ${insertedWithCompanions(insert, sql`from lock where lock.locked and ${guardHolds(insert)} and not exists (select from found)`)},
    stored as (
      insert into idempotency_keys (tenant_id, resource_type, key, request_hash, resource_id, response_status, response_body, response_etag, completed_at, expires_at)
      select ${ref.tenantId}, ${ref.resourceType}, ${ref.key}, ${snapshot.requestHash}, ${snapshot.resourceId}, ${snapshot.status}, ${jsonb(snapshot.body)}, ${snapshot.etag ?? null},
        ${snapshot.completedAt}, ${snapshot.expiresAt}
      from inserted)
    select lock.locked, exists (select from inserted) as created, exists (select from found) as found,
      ${guardHolds(insert)} as guarded, ${companionsOutcome(insert)} as companions
    from lock ${prepared()}`;
}

/** The statement's parameters in the order of its placeholders above (checked against Kysely's once per shape). */
function createWithKeyParameters(ref: KeyRef, insert: SingleRowInsert, snapshot: KeySnapshot): unknown[] {
  const { tenantId, resourceType, key } = ref;
  return [
    ref.lockId,
    tenantId,
    resourceType,
    key,
    ...insertParameters(insert),
    tenantId,
    resourceType,
    key,
    snapshot.requestHash,
    snapshot.resourceId,
    snapshot.status,
    JSON.stringify(snapshot.body),
    snapshot.etag ?? null,
    snapshot.completedAt,
    snapshot.expiresAt,
  ];
}

/**
 * The statement compiled once per shape (Kysely's compile was about 6 % of a site create's CPU), each create
 * binding the parameters `createWithKeyParameters` lists.
 */
const compiledCreates = new CompiledShapes<OneStatementCreate>();

function compiledCreate(
  db: Kysely<Database>,
  ref: KeyRef,
  insert: SingleRowInsert,
  snapshot: KeySnapshot,
): CompiledQuery<OneStatementCreate> {
  return compiledCreates.statement(insertShape(insert), createWithKeyParameters(ref, insert, snapshot), () =>
    createWithKeyStatement(ref, insert, snapshot).compile(db),
  );
}

/**
 * The one-statement create compiled by Kysely, and whether its parameters came out in the order that
 * `createWithKeyParameters` lists them (then the compiled text serves every create of the same shape).
 */
export function compileCreateWithKey(
  db: Kysely<Database>,
  ref: KeyRef,
  insert: SingleRowInsert,
  snapshot: KeySnapshot,
): { compiled: CompiledQuery<OneStatementCreate>; reusable: boolean } {
  const compiled = createWithKeyStatement(ref, insert, snapshot).compile(db);
  return { compiled, reusable: listedInOrder(compiled.parameters, createWithKeyParameters(ref, insert, snapshot)) };
}

/**
 * Lock, lookup, insert and snapshot as one statement (one round trip): inserts the row and stores the key
 * only when it holds the lock and no key row is there. The key's primary key refuses a snapshot that a
 * racing request committed after this statement's snapshot (a unique violation on `idempotency_keys_pkey`).
 */
export async function createWithKeyInOneStatement(
  db: Kysely<Database>,
  ref: KeyRef,
  insert: SingleRowInsert,
  snapshot: KeySnapshot,
): Promise<OneStatementCreate> {
  // With the other creates of this turn where it can (one transaction, one round trip); never beside a
  // create with the same key, whose advisory lock this one's transaction would already hold.
  const rows = await runInTurnBatch(db, compiledCreate(db, ref, insert, snapshot), ref.tenantId, ref.lockId);
  return rows[0]!;
}

/** Deletes keys past their replay window; run periodically by the maintenance loop. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}
