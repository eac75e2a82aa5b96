/**
 * PostgreSQL only: a pooled connection that dies while it is checked out (a database restart between two
 * statements of a transaction) must not crash the process; the broken connection's next query fails with
 * a connection error (which the error handler answers 503) and the pool serves new queries afterwards.
 * Found by the database-outage reliability suite: the API process died with an unhandled 'error' event.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type AppDatabase, openPostgres } from '../../src/db/database.js';
import { openEmptyDatabase } from '../helpers/app.js';

describe.skipIf(!inject('databaseUrl'))('a connection lost while checked out', () => {
  let own: Awaited<ReturnType<typeof openEmptyDatabase>>;
  let database: AppDatabase;
  let killer: AppDatabase;
  beforeAll(async () => {
    own = await openEmptyDatabase('ss_connection_loss');
    database = openPostgres(own.url!, 2);
    killer = openPostgres(own.url!, 1);
  });
  afterAll(async () => {
    await database?.close();
    await killer?.close();
    await own?.drop();
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
