/**
 * Group commit in the service: the one-statement writes of different requests that arrive in the same turn
 * of the event loop go to PostgreSQL together, in one round trip, as one transaction (`StatementBatch`).
 * Each statement is a whole write on its own (a create with its key, say); run together they share the
 * socket write, the commit and its WAL flush, which are most of what such a statement costs on both sides.
 *
 * All or nothing: a batch commits every statement or none. At the first error PostgreSQL skips the rest and
 * rolls the batch back; every statement is then run once more alone, so each gets its own answer, exactly
 * as if it had never been batched (a constraint it violates, a deadlock with another batch). Only a
 * statement that timed out, and those queued behind it in the batch, get its error at once (the database
 * is stuck, and they have waited out the timeout already) instead of waiting a second time. A write batch
 * whose connection broke once it was sent (no error from PostgreSQL, the socket gone) may have committed:
 * each of its statements gets that error (503), none runs again (a keyed create's retry replays it). No statement
 * of a write batch waits more than BATCH_LOCK_WAIT for a lock: past it the batch runs alone too. A request's
 * answer is sent only after its batch committed. Statements that could not run side by side (a create and
 * its own retry with the same Idempotency-Key) carry the same `apart` key, and the second of them runs alone.
 * A statement that runs alone (a batch of one, or again after its batch failed) holds one of its tenant's share
 * of the pool's connections (tenant-shares.ts); a batch, which may hold several tenants' statements, none.
 *
 * Reads that stand alone (a create's reads before its write) batch the same way in a lane of their own,
 * so that they never wait for the writes' commit.
 *
 * Only on PostgreSQL and outside transactions, and only statements named for preparation (`prepared()`);
 * anything else, and a batch of one, is an ordinary `executeQuery`.
 */
import type { CompiledQuery, Kysely, RawBuilder } from 'kysely';
import { isDatabaseTimeout, isLockWaitTimeout } from './errors.js';
import type { Executor } from './executor.js';
import type pg from 'pg';
import { isMarked, type PreparedNames } from './prepared-statements.js';
import type { Database } from './schema.js';
import { type BatchedStatement, StatementBatch } from './statement-batch.js';
import { asTenant } from './tenant-shares.js';
import { TurnQueue } from './turn-queue.js';

/** At most this many statements per transaction; more make another batch of the same turn. */
const MAX_BATCH = 32;

/**
 * How long a statement of a write batch may wait for a lock (its transaction's `lock_timeout`, set by the
 * batch's first statement). A batch holds every statement of its turn, other tenants' included, while one of
 * them waits: a visit create waiting for its site, which its own tenant's rename held for a second (or up to the
 * statement timeout on a site of a million visits), held every create of the batch as long, and past the
 * statement timeout failed those queued behind it (hostile-tenant probe). Past this wait the batch rolls back
 * and each statement runs alone, so only the one that waits goes on waiting; a batch's own commit, which a
 * duplicate key waits for, takes milliseconds.
 */
const BATCH_LOCK_WAIT = '250ms';
const LOCK_WAIT: BatchedStatement = {
  name: 'turn_batch_lock_wait',
  text: `select set_config('lock_timeout', $1, true)`,
  values: [BATCH_LOCK_WAIT],
};

/**
 * Why a batch failed: the error, the index of the statement it came from (undefined: none was sent), and
 * whether it may have committed all the same.
 */
interface BatchFailure {
  error: unknown;
  index: number | undefined;
  inDoubt: boolean;
}

interface Waiting {
  compiled: CompiledQuery<unknown>;
  statement: BatchedStatement;
  apart: string | undefined;
  /** Whose request it is: a statement run alone holds one of that tenant's share of connections (tenant-shares.ts). */
  tenantId: string | undefined;
  resolve: (rows: unknown[]) => void;
  reject: (error: unknown) => void;
}

/** Running totals of a database's batches, for the metrics. */
export interface TurnBatchTotals {
  /** Batches of two or more statements sent. */
  batches: number;
  /** Statements sent in them. */
  statements: number;
  /** Batches that failed and were run again statement by statement. */
  failed: number;
}

class TurnBatches {
  private readonly waiting = new TurnQueue<Waiting>((entries) => this.flush(entries));

  /** @param lockWait the statement that bounds the batch's lock waits (the write lane's); reads take no row locks */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly pool: pg.Pool,
    private readonly names: PreparedNames,
    private readonly totals: TurnBatchTotals,
    private readonly lockWait?: BatchedStatement,
  ) {}

  run<R>(compiled: CompiledQuery<R>, tenantId: string | undefined, apart: string | undefined): Promise<R[]> {
    const name = isMarked(compiled.sql) ? this.names.nameOf(compiled.sql) : undefined;
    if (name === undefined) return this.alone(compiled, tenantId);
    return new Promise<unknown[]>((resolve, reject) => {
      const statement = { name, text: compiled.sql, values: compiled.parameters };
      this.waiting.add({ compiled, statement, apart, tenantId, resolve, reject });
    }) as Promise<R[]>;
  }

  private flush(waiting: Waiting[]): void {
    let batch: Waiting[] = [];
    const apartKeys = new Set<string>();
    for (const entry of waiting) {
      if (entry.apart !== undefined && apartKeys.has(entry.apart)) {
        this.settle([entry]);
        continue;
      }
      if (entry.apart !== undefined) apartKeys.add(entry.apart);
      batch.push(entry);
      if (batch.length === MAX_BATCH) {
        this.settle(batch);
        batch = [];
        apartKeys.clear();
      }
    }
    if (batch.length > 0) this.settle(batch);
  }

  private settle(batch: Waiting[]): void {
    if (batch.length === 1) {
      const [only] = batch;
      this.alone(only!.compiled, only!.tenantId).then(only!.resolve, only!.reject);
      return;
    }
    this.totals.batches += 1;
    this.totals.statements += batch.length;
    this.together(batch).then(
      (results) => {
        for (const [index, entry] of batch.entries()) entry.resolve(results[index]!);
      },
      (failure: BatchFailure) => {
        this.totals.failed += 1;
        for (const [index, entry] of batch.entries()) {
          // Alone again, except where that would only wait as long once more: the statement that timed out
          // (a database that does not answer) and those queued behind it, which waited just as long; and all
          // of them when no connection came. A lock's wait is one statement's: the others go on alone. Never
          // again a batch that may have committed: alone again, a create without a key was made twice.
          const waitsAgain =
            failure.index === undefined ||
            failure.inDoubt ||
            (index >= failure.index && isDatabaseTimeout(failure.error) && !isLockWaitTimeout(failure.error));
          if (waitsAgain) entry.reject(failure.error);
          else this.alone(entry.compiled, entry.tenantId).then(entry.resolve, entry.reject);
        }
      },
    );
  }

  /** The statements as one transaction; rejects with a `BatchFailure`. */
  private async together(batch: Waiting[]): Promise<unknown[][]> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw { error, index: undefined, inDoubt: false } satisfies BatchFailure;
    }
    const first = this.lockWait ? [this.lockWait] : [];
    const statements = new StatementBatch([...first, ...batch.map((entry) => entry.statement)], this.names.shapes);
    try {
      const results = await statements.run(client);
      client.release();
      return results.slice(first.length).map((result) => result.rows);
    } catch (error) {
      // An error PostgreSQL answered leaves the connection usable and the batch rolled back; anything else (a
      // client timeout, a broken socket) discards the connection, and the batch's Sync, its commit, may
      // have been carried out without its answer reaching us.
      const answered = (error as { code?: string }).code !== undefined;
      client.release(answered ? undefined : (error as Error));
      for (const entry of batch) this.names.failed(entry.statement.text, entry.statement.name, error);
      const at = statements.failedAt;
      const index = at === undefined ? undefined : Math.max(0, at - first.length);
      // Reads (the lane without the lock wait) change nothing: read again whatever became of them.
      throw { error, index, inDoubt: !answered && this.lockWait !== undefined } satisfies BatchFailure;
    }
  }

  /** The statement alone, on one of its tenant's share of connections (a batch is charged to none). */
  private alone<R>(compiled: CompiledQuery<R>, tenantId: string | undefined): Promise<R[]> {
    return asTenant(this.db, tenantId, async () => [...(await this.db.executeQuery(compiled)).rows]);
  }
}

/** A turn's statements go in one of two lanes: reads do not wait for the writes' commit (its WAL flush). */
type Lane = 'writes' | 'reads';

const batchesOf = new WeakMap<Kysely<Database>, Record<Lane, TurnBatches>>();
const totalsOf = new WeakMap<Kysely<Database>, TurnBatchTotals>();

/** Lets `runInTurnBatch` and `readInTurnBatch` batch the statements of `db` on its PostgreSQL pool. */
export function batchTurnsOf(db: Kysely<Database>, pool: pg.Pool, names: PreparedNames): void {
  const totals = { batches: 0, statements: 0, failed: 0 };
  totalsOf.set(db, totals);
  batchesOf.set(db, {
    writes: new TurnBatches(db, pool, names, totals, LOCK_WAIT),
    reads: new TurnBatches(db, pool, names, totals),
  });
}

/** The running totals of `db`'s batches (undefined where nothing is batched: PGlite). */
export function turnBatchTotals(db: Kysely<Database>): Readonly<TurnBatchTotals> | undefined {
  return totalsOf.get(db);
}

function inLane<R>(
  lane: Lane,
  executor: Executor,
  statement: CompiledQuery<R> | RawBuilder<R>,
  tenantId: string | undefined,
  apart: string | undefined,
): Promise<R[]> {
  const compiled = 'compile' in statement ? statement.compile(executor) : statement;
  const batches = executor.isTransaction ? undefined : batchesOf.get(executor);
  if (!batches) return executor.executeQuery(compiled).then((result) => [...result.rows]);
  return batches[lane].run(compiled, tenantId, apart);
}

/**
 * Runs the write on `executor`: outside a transaction, in one transaction with the other writes of this
 * turn where it can (see above). Statements with the same `apart` key never share a batch. `tenantId` is whose
 * request it is (undefined: no tenant's, the worker's): run alone, it holds one of that tenant's share of
 * connections. Its rows.
 */
export async function runInTurnBatch<R>(
  executor: Executor,
  statement: CompiledQuery<R> | RawBuilder<R>,
  tenantId: string | undefined,
  apart?: string,
): Promise<R[]> {
  return inLane('writes', executor, statement, tenantId, apart);
}

/**
 * Runs the read on `executor`: outside a transaction, in one round trip with the other reads of this turn
 * where it can (a read-only transaction, which commits without a WAL flush). `tenantId` as for
 * `runInTurnBatch`. Its rows.
 */
export async function readInTurnBatch<R>(
  executor: Executor,
  statement: CompiledQuery<R> | RawBuilder<R>,
  tenantId: string | undefined,
): Promise<R[]> {
  return inLane('reads', executor, statement, tenantId, undefined);
}
