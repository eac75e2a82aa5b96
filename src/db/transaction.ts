/**
 * Transactions with after-commit effects. Work that must happen only once the transaction's rows are
 * visible to others (waking the delivery workers), and never when it rolls back, is registered with
 * `afterCommit(tx, effect)` during the transaction and run by `transaction(db, work)` after the commit,
 * outside it: a transaction that NOTIFYs takes a lock at commit that serialises every such commit.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import { asTenant } from './tenant-shares.js';

/** Run after commit with the database the transaction was opened on; its own errors are its to handle. */
export type AfterCommitEffect = (db: Kysely<Database>) => void;

interface OpenTransaction {
  db: Kysely<Database>;
  effects: AfterCommitEffect[];
  endings: Array<() => void>;
}

const openTransactions = new WeakMap<Transaction<Database>, OpenTransaction>();

/**
 * Runs `work` in a transaction, then (once it has committed, never on rollback) its after-commit effects,
 * and, however it ended, its endings. `tenantId` is the tenant whose request it is: the transaction's connection
 * is one of that tenant's share (tenant-shares.ts), waited for when its share is taken. Undefined for work that
 * is no tenant's (the worker's, the listener hub's, the operator's).
 */
export async function transaction<T>(
  db: Kysely<Database>,
  tenantId: string | undefined,
  work: (tx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const effects: AfterCommitEffect[] = [];
  const endings: Array<() => void> = [];
  try {
    const result = await asTenant(db, tenantId, () =>
      db.transaction().execute(async (tx) => {
        openTransactions.set(tx, { db, effects, endings });
        try {
          return await work(tx);
        } finally {
          openTransactions.delete(tx);
        }
      }),
    );
    for (const effect of effects) effect(db);
    return result;
  } finally {
    for (const ending of endings) ending();
  }
}

/** The database `tx` was opened on by `transaction()` (undefined for any other transaction). */
export function openedOn(tx: Transaction<Database>): Kysely<Database> | undefined {
  return openTransactions.get(tx)?.db;
}

/**
 * Registers `ending` to run once `tx` has ended, committed or rolled back (after the after-commit effects).
 * Returns false, registering nothing, when `tx` was not opened through `transaction()`.
 */
export function afterEnd(tx: Transaction<Database>, ending: () => void): boolean {
  const open = openTransactions.get(tx);
  if (!open) return false;
  open.endings.push(ending);
  return true;
}

/**
 * Registers an effect to run after `tx` commits. Returns false, registering nothing, when `tx` was not
 * opened through `transaction()` (the caller then does the work inside the transaction instead).
 */
export function afterCommit(tx: Transaction<Database>, effect: AfterCommitEffect): boolean {
  const open = openTransactions.get(tx);
  if (!open) return false;
  open.effects.push(effect);
  return true;
}
