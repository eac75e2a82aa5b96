/**
 * What a create is asked to do and what it answers (http/idempotency.ts runs it): the request, the kinds of
 * creation a module describes (one row, a read and then one row, or any work in a transaction), the
 * outcome (`created`: a first create's), and `GuardFailed`, raised by both create paths when a row's guard
 * did not hold.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SingleRowInsert } from '../db/single-row-insert.js';
import type { ResourceObject } from './envelope.js';
import type { Problem } from './problem.js';

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

/** A row's guard did not hold: what it was built from changed, and nothing was written. */
export class GuardFailed extends Error {}

/** The answer of a create: 201, the envelope and its ETag. */
export function created(resource: ResourceObject<unknown>): CreateOutcome {
  return { id: resource.id, status: 201, body: { data: resource }, etag: resource.meta.etag, replayed: false };
}
