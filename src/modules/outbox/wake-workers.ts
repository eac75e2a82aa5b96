/**
 * How committed work wakes the delivery workers (LISTEN/NOTIFY, on PostgreSQL and PGlite alike): one
 * notify on the pool after the commit, outside the transaction. A transaction that NOTIFYs takes a
 * global lock at commit, serialising every such commit behind its own WAL flush (issue 19).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import pino from 'pino';
import type { Database } from '../../db/schema.js';
import { afterCommit } from '../../db/transaction.js';

/** The channel on which committed work wakes the delivery workers. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

/**
 * A failed wake is only logged: the rows are committed, and every worker polls anyway
 * (WEBHOOK_POLL_INTERVAL_MS, pollIntervalMs, 1 s by default), so a lost wake delays, never loses.
 */
const wakeLog = pino({ name: 'wake-workers', level: 'warn' });

/**
 * The wakes of one database handle, coalesced: at most one notify in flight; wakes requested meanwhile
 * send one more after it, so every commit is followed by a notify that started after it.
 */
class CoalescedWake {
  private inFlight = false;
  private again = false;

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
        wakeLog.warn({ err: error }, 'waking the delivery workers failed; their poll will find the deliveries');
      }
    } while (this.again);
    this.inFlight = false;
  }
}

const wakes = new WeakMap<Kysely<Database>, CoalescedWake>();

/** Wakes every listening worker, in this process and others, now (outside any transaction). */
export function wakeWorkers(db: Kysely<Database>): void {
  let wake = wakes.get(db);
  if (!wake) {
    wake = new CoalescedWake(db);
    wakes.set(db, wake);
  }
  wake.request();
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
