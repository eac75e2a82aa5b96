/** db/transaction.ts: after-commit effects run once the transaction committed, never on rollback. */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../../src/db/database.js';
import { afterCommit, transaction } from '../../../src/db/transaction.js';

const database = openPglite(new PGlite());
afterAll(() => database.close());

describe('transaction() with after-commit effects', () => {
  it('runs the effects after the commit, in order, with the database', async () => {
    const seen: string[] = [];
    const result = await transaction(database.db, undefined, async (tx) => {
      expect(afterCommit(tx, (db) => seen.push(db === database.db ? 'first' : 'wrong db'))).toBe(true);
      afterCommit(tx, () => seen.push('second'));
      seen.push('work');
      return 42;
    });
    expect(result).toBe(42);
    expect(seen).toEqual(['work', 'first', 'second']);
  });

  it('never runs them when the transaction rolls back', async () => {
    const seen: string[] = [];
    await expect(
      transaction(database.db, undefined, async (tx) => {
        afterCommit(tx, () => seen.push('effect'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(seen).toEqual([]);
  });

  it('registers nothing on a transaction opened otherwise (the caller acts inside it)', async () => {
    const registered = await database.db.transaction().execute(async (tx) => afterCommit(tx, () => undefined));
    expect(registered).toBe(false);
  });
});
