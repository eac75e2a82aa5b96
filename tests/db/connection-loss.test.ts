/**
 * PostgreSQL only: a pooled connection that dies while it is checked out (a database restart between two
 * statements of a transaction) must not crash the process; the broken connection's next query fails with
 * a connection error (which the error handler answers 503) and the pool serves new queries afterwards.
 * Found by the database-outage reliability suite: the API process died with an unhandled 'error' event.
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../../src/db/database.js';

const url = inject('databaseUrl');

describe.skipIf(!url)('a connection lost while checked out', () => {
  const database = url ? openPostgres(url, 2) : undefined;
  const killer = url ? openPostgres(url, 1) : undefined;
  afterAll(async () => {
    await database?.close();
    await killer?.close();
  });

  it('breaks that connection only; the process and the pool carry on', async () => {
    const { db } = database!;
    const outcome = await db
      .transaction()
      .execute(async (tx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx);
        await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(killer!.db);
        // The termination reaches the idle, checked-out client before its next statement.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`select 1`.execute(tx);
        return 'committed';
      })
      .catch((error: Error) => error.message);
    expect(outcome).toMatch(/terminat|not queryable|connection/i);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
    expect(rows[0]!.one).toBe(1);
  });
});
