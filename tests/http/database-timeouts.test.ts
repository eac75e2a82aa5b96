/**
 * PostgreSQL only (PGlite has one connection and does not enforce statement_timeout): a slow or stuck
 * database answers 503 `service-unavailable` with Retry-After, never 500 and never a hang. A table locked by
 * another connection (statement_timeout, 57014; lock_timeout where set, 55P03) and a database that stops
 * answering (the client's query timeout) are both answered within about their timeout, on pools opened with
 * a 200 ms statement timeout, and the service serves again once the database does. Own database, since a
 * locked table would slow the other test files down.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { clientQueryTimeoutMs, openPostgres } from '../../src/db/database.js';
import { openEmptyDatabase, startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';
import { TcpProxy } from '../reliability/lib/tcp-proxy.js';

const url = inject('databaseUrl');
const STATEMENT_TIMEOUT_MS = 200;
/** Far below the default statement timeout (30 s): answered by the short one, not by some other bound. */
const PROMPT_MS = 5_000;

describe.skipIf(!url)('a slow or stuck database', () => {
  let empty: Awaited<ReturnType<typeof openEmptyDatabase>>;
  let t: TestApp;
  let tenant: Awaited<ReturnType<typeof tenantWithToken>>;
  const closing: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    empty = await openEmptyDatabase('ss_timeouts');
    t = await startTestApp({ database: openPostgres(empty.url!, 5, STATEMENT_TIMEOUT_MS) });
    closing.push(
      () => t.close(),
      () => t.database.close(),
    );
    tenant = await tenantWithToken(t);
  });
  afterAll(async () => {
    for (const close of closing.reverse()) await close().catch(() => undefined);
    await empty?.drop();
  });

  /** The request's answer and how long it took. */
  async function timed(request: () => Promise<TestResponse>): Promise<{ response: TestResponse; ms: number }> {
    const started = Date.now();
    const response = await request();
    return { response, ms: Date.now() - started };
  }

  function expectUnavailable(response: TestResponse): void {
    expectProblem(response, 503, 'service-unavailable');
    expect(response.headers.get('retry-after')).toBe('5');
    expect(response.text).not.toMatch(/timeout|cancel|lock|57014|55P03/i);
  }

  /** Holds an ACCESS EXCLUSIVE lock on `table` from another connection until the returned release runs. */
  async function lockTable(table: string): Promise<() => Promise<void>> {
    const holder = new pg.Client({ connectionString: empty.url });
    await holder.connect();
    await holder.query('begin');
    await holder.query(`lock table ${table} in access exclusive mode`);
    return async () => {
      await holder.query('rollback');
      await holder.end();
    };
  }

  it('a locked table: 503 after the statement timeout (57014), served again once the lock is released', async () => {
    const release = await lockTable('sites');
    try {
      const list = await timed(() => t.http.get('/api/v1/sites', { token: tenant.token }));
      expectUnavailable(list.response);
      expect(list.ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);
      expect(list.ms).toBeLessThan(PROMPT_MS);
      const create = await timed(() =>
        t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody(), headers: { 'idempotency-key': 'k1' } }),
      );
      expectUnavailable(create.response);
      expect(create.ms).toBeLessThan(PROMPT_MS);
      // What does not need the table is unaffected.
      expect((await t.http.get('/api/v1/projects', { token: tenant.token })).status).toBe(200);
    } finally {
      await release();
    }
    expect((await t.http.get('/api/v1/sites', { token: tenant.token })).status).toBe(200);
    const retried = await t.http.post('/api/v1/sites', {
      token: tenant.token,
      json: siteBody(),
      headers: { 'idempotency-key': 'k1' },
    });
    expect(retried.status, retried.text).toBe(201);
  });

  it('a lock timeout set by the operator (55P03) is 503 as well, after the lock timeout', async () => {
    // lock_timeout through the connection string, well below this pool's statement timeout.
    const withLockTimeout = new URL(empty.url!);
    withLockTimeout.searchParams.set('options', '-c lock_timeout=100');
    const statementTimeoutMs = 10_000;
    const locked = await startTestApp({
      database: openPostgres(withLockTimeout.toString(), 2, statementTimeoutMs),
      keys: t.keys,
    });
    closing.push(
      () => locked.close(),
      () => locked.database.close(),
    );
    const release = await lockTable('sites');
    try {
      const list = await timed(() => locked.http.get('/api/v1/sites', { token: tenant.token }));
      expectUnavailable(list.response);
      expect(list.ms).toBeLessThan(statementTimeoutMs);
    } finally {
      await release();
    }
    expect((await locked.http.get('/api/v1/sites', { token: tenant.token })).status).toBe(200);
  });

  it('a database that accepts and never answers: 503 after the client timeout, the pool recovers', async () => {
    const target = new URL(empty.url!);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    closing.push(() => proxy.close());
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    const silent = await startTestApp({
      database: openPostgres(target.toString(), 2, STATEMENT_TIMEOUT_MS),
      keys: t.keys,
    });
    closing.push(
      () => silent.close(),
      () => silent.database.close(),
    );
    expect((await silent.http.get('/api/v1/sites', { token: tenant.token })).status).toBe(200);

    await proxy.setMode('stall');
    const list = await timed(() => silent.http.get('/api/v1/sites', { token: tenant.token }));
    expectUnavailable(list.response);
    expect(list.ms).toBeGreaterThanOrEqual(clientQueryTimeoutMs(STATEMENT_TIMEOUT_MS) - 50);
    expect(list.ms).toBeLessThan(PROMPT_MS);
    // No connection that timed out is kept: the pool holds none of them.
    expect(silent.database.pool!.totalCount).toBe(0);

    await proxy.setMode('forward');
    expect((await silent.http.get('/api/v1/sites', { token: tenant.token })).status).toBe(200);
  });
});
