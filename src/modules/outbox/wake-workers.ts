/**
 * How committed work wakes the delivery workers (LISTEN/NOTIFY, on PostgreSQL and PGlite alike): one
 * notify on the pool after the commit, outside the transaction. A transaction that NOTIFYs takes a
 * global lock at commit, serialising every such commit behind its own WAL flush (issue 19).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import { isClosing } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { afterCommit } from '../../db/transaction.js';
import type { ClaimedDelivery } from './types.js';

/** The channel on which committed work wakes the delivery workers. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

/**
 * The wakes of one database handle, coalesced: at most one notify in flight; wakes requested meanwhile
 * send one more after it, so every commit is followed by a notify that started after it.
 */
class CoalescedWake {
  private inFlight = false;
  private again = false;
  /** The app's logger, given by buildApp (logWakeFailuresTo); a handle no app was built on logs nothing. */
  logger: Logger | undefined;

  constructor(private readonly db: Kysely<Database>) {}

  request(): void {
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    void this.send();
  }

  private async send(): Promise<void> {
    do {
      this.again = false;
      try {
        await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(this.db);
      } catch (error) {
        this.reportFailure(error);
      }
    } while (this.again);
    this.inFlight = false;
  }

  /**
   * A failed wake is only logged: the rows are committed, and every worker polls anyway
   * (WEBHOOK_POLL_INTERVAL_MS, pollIntervalMs, 1 s by default), so a lost wake delays, never loses. One that
   * failed because the database is closing is no warning: the service is stopping, its workers with it.
   */
  private reportFailure(error: unknown): void {
    if (isClosing(this.db)) this.logger?.debug({ err: error }, 'a wake was dropped: the database is closing');
    else this.logger?.warn({ err: error }, 'waking the delivery workers failed; their poll will find the deliveries');
  }
}

const wakes = new WeakMap<Kysely<Database>, CoalescedWake>();

function wakeOf(db: Kysely<Database>): CoalescedWake {
  let wake = wakes.get(db);
  if (!wake) {
    wake = new CoalescedWake(db);
    wakes.set(db, wake);
  }
  return wake;
}

/** Where the failed wakes on `db` are logged: the app's logger, given where the app is composed (buildApp). */
export function logWakeFailuresTo(db: Kysely<Database>, logger: Logger): void {
  wakeOf(db).logger = logger;
}

/**
 * A claim, made by a worker of this process before an event is written, of the deliveries the event's
 * statement will queue: they are queued already claimed for one attempt (`claimedAt`, leased until
 * `leasedUntil`), so that the worker need not find and claim them after the commit.
 */
export interface BirthClaim {
  claimedAt: Date;
  leasedUntil: Date;
  /** Once the statement that queued `deliveries` (claimed by this claim) has committed: deliver them. */
  committed(deliveries: readonly ClaimedDelivery[]): void;
  /** Once the create has ended, whatever its outcome: the worker's slot is free again unless `committed` took it. */
  settled(): void;
}

/** A worker of this process that reads the queue through a handle. */
export interface LocalWorker {
  wake(): void;
  /** A claim of the deliveries of an event of `tenantId` about to be written, when the worker can take them at once. */
  claimAtBirth(tenantId: string): BirthClaim | undefined;
}

/** The workers of this process that read the queue through each handle, woken without the notify's round trip. */
const localWorkers = new WeakMap<Kysely<Database>, Set<LocalWorker>>();

/**
 * Registers a worker of this process that reads the queue through `db`: `wakeWorkers(db)` wakes it
 * directly, as well as notifying the other processes, and `claimAtBirth(db)` asks it. Returns the
 * unregistration.
 */
export function wakeHere(db: Kysely<Database>, worker: LocalWorker): () => void {
  let workers = localWorkers.get(db);
  if (!workers) {
    workers = new Set();
    localWorkers.set(db, workers);
  }
  workers.add(worker);
  return () => workers.delete(worker);
}

/**
 * A birth claim, for an event of `tenantId`, of a worker of this process reading the queue through `db`
 * (none when there is none, or none can take more now).
 */
export function claimAtBirth(db: Kysely<Database>, tenantId: string): BirthClaim | undefined {
  for (const worker of localWorkers.get(db) ?? []) {
    const claim = worker.claimAtBirth(tenantId);
    if (claim) return claim;
  }
  return undefined;
}

/**
 * Wakes every listening worker, in this process and others, now (outside any transaction, after the commit
 * of what it wakes them for): the workers of this process that read through `db` at once, the others by a
 * notify. A worker of this process hears the notify too; a wake it does not need costs it one look.
 */
export function wakeWorkers(db: Kysely<Database>): void {
  for (const worker of localWorkers.get(db) ?? []) worker.wake();
  wakeOf(db).request();
}

/**
 * Wakes every listening worker once the transaction has committed: after it, when the transaction was
 * opened by db/transaction.ts's `transaction()`; otherwise by a notify inside it, which PostgreSQL
 * delivers at commit (so no caller loses its wake).
 */
export async function notifyWorkers(tx: Transaction<Database>): Promise<void> {
  if (afterCommit(tx, wakeWorkers)) return;
  await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(tx);
}
