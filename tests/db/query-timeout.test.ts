/**
 * PostgreSQL only: a database that accepts a query and never answers. pg's client-side `query_timeout`
 * ends the wait, but pg leaves the query active on its connection; pg-pool lends such a connection again
 * unless it is released with an error. The service's pool (timed-out-connections.ts) releases it with one,
 * so the connection is destroyed, the rest of its transaction fails at once, and the pool carries on with
 * new connections. The database is made silent by a TCP proxy that stops carrying bytes ('stall').
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { clientQueryTimeoutMs, openPostgres } from '../../src/db/database.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { TcpProxy } from '../reliability/lib/tcp-proxy.js';

const STATEMENT_TIMEOUT_MS = 200;
const CLIENT_TIMEOUT_MS = clientQueryTimeoutMs(STATEMENT_TIMEOUT_MS);

describe.skipIf(!inject('databaseUrl'))('a database that never answers a query', () => {
  let own: Awaited<ReturnType<typeof openEmptyDatabase>>;
  let proxy: TcpProxy;
  let throughProxy: string;
  beforeAll(async () => {
    own = await openEmptyDatabase('ss_query_timeout');
    const target = new URL(own.url!);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    throughProxy = target.toString();
  });
  afterAll(async () => {
    await proxy?.close();
    await own?.drop();
  });

  it('pg-pool lends a connection whose query timed out again unless it is released with an error', async () => {
    await proxy.setMode('forward');
    const pool = new pg.Pool({ connectionString: throughProxy, max: 1, query_timeout: 300 });
    pool.on('error', () => undefined);
    try {
      const first = await pool.connect();
      await proxy.setMode('stall');
      await expect(first.query('select 1')).rejects.toThrow('Query read timeout');
      first.release();
      // Kept: the same connection, its timed-out query still active, is idle in the pool.
      expect([pool.totalCount, pool.idleCount]).toEqual([1, 1]);
      const again = await pool.connect();
      expect(again).toBe(first);
      // Released with the error, it is removed and ended.
      again.release(new Error('Query read timeout'));
      expect(pool.totalCount).toBe(0);
    } finally {
      await proxy.setMode('forward');
      await pool.end();
    }
  });

  it("the service's pool destroys that connection, fails the rest of its transaction at once, and recovers", async () => {
    await proxy.setMode('forward');
    const database = openPostgres(throughProxy, 2, STATEMENT_TIMEOUT_MS);
    const removed: unknown[] = [];
    database.pool!.on('remove', (client) => removed.push(client));
    try {
      expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);

      // A single statement: rejected after the client timeout, its connection removed from the pool.
      await proxy.setMode('stall');
      let started = Date.now();
      await expect(sql`select 1`.execute(database.db)).rejects.toThrow('Query read timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(CLIENT_TIMEOUT_MS - 50);
      expect(database.pool!.totalCount).toBe(0);
      // Ended: the pool reports it removed once its socket is closed.
      await vi.waitFor(() => expect(removed).toHaveLength(1));

      // A transaction begun before the database fell silent: its statement times out, and its ROLLBACK
      // fails at once instead of waiting a second client timeout behind the unanswered statement.
      await proxy.setMode('forward');
      const outcome = database.db.transaction().execute(async (tx) => {
        await proxy.setMode('stall');
        started = Date.now();
        await sql`select 1`.execute(tx);
      });
      // BEGIN was answered before the stall; the statement after it was not.
      await expect(outcome).rejects.toThrow('Query read timeout');
      expect(Date.now() - started).toBeLessThan(2 * CLIENT_TIMEOUT_MS);
      expect(database.pool!.totalCount).toBe(0);
      await vi.waitFor(() => expect(removed).toHaveLength(2));

      // The database answers again: the pool opens a new connection and serves.
      await proxy.setMode('forward');
      const accepted = proxy.accepted;
      expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
      expect(proxy.accepted).toBe(accepted + 1);
    } finally {
      await proxy.setMode('forward');
      await database.close();
    }
  });
});
