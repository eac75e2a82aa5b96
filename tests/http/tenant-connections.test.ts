/**
 * PostgreSQL only (PGlite has one connection and runs one transaction at a time: no request there waits for a
 * lock while another runs). One tenant's requests hold at most DATABASE_CONNECTIONS_PER_TENANT of the pool's
 * connections at once (src/db/tenant-shares.ts). Found by a hostile-tenant probe: a rename of a site with
 * 450,000 visits held the site's row for 10 s, the renaming tenant's own creates on that site each waited for it
 * on a connection of the pool, and another tenant's create waited 5 s for a connection and was answered 503.
 *
 * Here another connection holds the site's row as the rename does (FOR UPDATE) while the tenant sends more
 * requests that need it than its share. Its share waits for the row; the rest wait for one of its places and are
 * answered 503 with Retry-After, having changed nothing: retried with their Idempotency-Key, each is created
 * once. Another tenant is served meanwhile, and still when two tenants each fill their share: their second and
 * later requests together leave a quarter of the pool (at least one) to the others.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../../src/db/database.js';
import { openEmptyDatabase, startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectProblem } from '../helpers/problems.js';
import { siteBody } from '../helpers/tenants.js';
import { visitBody, visitTenant, type VisitTenant } from '../helpers/visits.js';

const url = inject('databaseUrl');
/**
 * A pool of 4, of which one tenant holds at most 2 and the tenants' second and later requests 3 together; a request
 * past them waits 1.5 s for one.
 */
const POOL = 4;
const PER_TENANT = 2;
const WAIT_MS = 1_500;

describe.skipIf(!url)("one tenant's requests and the pool's connections", () => {
  let empty: Awaited<ReturnType<typeof openEmptyDatabase>>;
  let t: TestApp;
  let renaming: VisitTenant;
  let bystander: VisitTenant;
  let alsoRenaming: VisitTenant;
  let watcher: pg.Client;
  beforeAll(async () => {
    empty = await openEmptyDatabase('ss_tenant_share');
    t = await startTestApp({
      database: openPostgres(empty.url!, POOL, undefined, { perTenant: PER_TENANT, waitMs: WAIT_MS }),
    });
    [renaming, bystander, alsoRenaming] = [
      await visitTenant(t, { assets: 0 }),
      await visitTenant(t, { assets: 0 }),
      await visitTenant(t, { assets: 0 }),
    ];
    watcher = new pg.Client({ connectionString: empty.url });
    await watcher.connect();
  });
  afterAll(async () => {
    await watcher?.end();
    await t?.close();
    await t?.database.close();
    await empty?.drop();
  });

  /** Holds the site's row as a rename of its code does, from a connection of its own, until released. */
  async function holdSite(siteId: string): Promise<() => Promise<void>> {
    const holder = new pg.Client({ connectionString: empty.url });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select 1 from sites where id = $1 for update', [siteId]);
    return async () => {
      await holder.query('commit');
      await holder.end();
    };
  }

  /** Until `done` holds, asked again every 10 ms (the state it waits for comes by itself, however slowly). */
  async function until(done: () => Promise<boolean> | boolean): Promise<void> {
    while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  async function waitingForLocks(): Promise<number> {
    // The activity view is a snapshot held for the transaction unless cleared.
    await watcher.query('select pg_stat_clear_snapshot()');
    const waiting = await watcher.query(
      "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    return waiting.rowCount ?? 0;
  }

  async function metric(name: string): Promise<number> {
    const text = (await t.http.get('/metrics', { token: t.adminToken })).text;
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  }

  const createVisit = (v: VisitTenant, key: string, body: Record<string, unknown>) =>
    t.http.post('/api/v1/site-visits', { token: v.token, json: body, headers: { 'idempotency-key': key } });

  it("serves another tenant while one tenant's requests wait for a row; its requests past its share are 503", async () => {
    const creates = Array.from({ length: 5 }, () => ({ key: randomUUID(), body: visitBody(renaming) }));
    const waitsBefore = await metric('db_tenant_share_waits_total');
    const release = await holdSite(renaming.siteId);
    let released = false;
    const answered: TestResponse[] = [];
    try {
      const sent = [
        ...creates.map(({ key, body }) => createVisit(renaming, key, body)),
        t.http.patch(`/api/v1/sites/${renaming.siteId}`, { token: renaming.token, json: { name: 'Renamed' } }),
      ].map((request) =>
        request.then((response) => {
          answered.push(response);
          return response;
        }),
      );

      // Its share waits for the row on two connections; the other four wait for one of them, on none.
      await until(async () => (await waitingForLocks()) >= PER_TENANT);

      // The other tenant finds a connection: without the share, the six held the pool's four until the row was
      // free, and the other tenant's create waited 5 s for one and was answered 503.
      const site = await t.http.post('/api/v1/sites', { token: bystander.token, json: siteBody() });
      expect(site.status, site.text).toBe(201);
      const visit = await createVisit(bystander, randomUUID(), visitBody(bystander));
      expect(visit.status, visit.text).toBe(201);
      expect((await t.http.get('/api/v1/sites', { token: bystander.token })).status).toBe(200);

      // The four past the share: 503 once they have waited, while the row is still held.
      await until(async () => (await metric('db_tenant_share_waits_total')) >= waitsBefore + 4);
      await until(() => answered.length === 4);
      for (const response of answered) {
        expectProblem(response, 503, 'service-unavailable');
        expect(response.headers.get('retry-after')).toBe('2');
        expect(response.body.detail).toMatch(/2 requests working in the database/);
      }
      expect(await metric('db_tenant_share_refusals_total')).toBeGreaterThanOrEqual(4);

      released = true;
      await release();
      const outcomes = await Promise.all(sent);
      // The two that held the share are answered as without it once the row is free.
      expect(outcomes.filter((response) => response.status === 503)).toHaveLength(4);
      for (const response of outcomes.filter((response) => response.status !== 503))
        expect([200, 201]).toContain(response.status);
    } finally {
      if (!released) await release();
    }

    // Retried with their keys, the refused creates run as new; the accepted ones replay. Each visit exists once.
    const retried = await Promise.all(creates.map(({ key, body }) => createVisit(renaming, key, body)));
    for (const response of retried) expect(response.status, response.text).toBe(201);
    const replays = retried.filter((response) => response.headers.get('idempotent-replayed') === 'true');
    expect(replays.length).toBeLessThanOrEqual(PER_TENANT);
    const stored = await watcher.query('select client_ticket_number from site_visits where site_id = $1', [
      renaming.siteId,
    ]);
    expect(stored.rows.map((row) => row.client_ticket_number).sort()).toEqual(
      creates.map(({ body }) => body.clientTicketNumber).sort(),
    );
  });
  it('serves another tenant while two tenants each have their share waiting for a row', async () => {
    const waitsBefore = await metric('db_tenant_share_waits_total');
    const releases = [await holdSite(renaming.siteId), await holdSite(alsoRenaming.siteId)];
    let released = false;
    const answered: TestResponse[] = [];
    try {
      const sent = [renaming, alsoRenaming].flatMap((tenant) =>
        Array.from({ length: 3 }, () =>
          createVisit(tenant, randomUUID(), visitBody(tenant)).then((response) => {
            answered.push(response);
            return response;
          }),
        ),
      );
      // The first tenant's share (2) and the second's first place wait for their rows, 3 of the pool's 4; its third
      // waits for its share, the second tenant's other two are held back. (Without the limit, the fourth
      // connection went to the second tenant's second request, waiting for its row too.)
      await until(
        async () =>
          ((await waitingForLocks()) >= 3 && (await metric('db_tenant_share_waits_total')) >= waitsBefore + 3) ||
          (await waitingForLocks()) >= 4,
      );

      // Two shares of 2 were the whole pool: the other tenant's create waited 5 s for a connection and was 503.
      const site = await t.http.post('/api/v1/sites', { token: bystander.token, json: siteBody() });
      expect(site.status, site.text).toBe(201);

      // The second tenant's two held back by the others: 503 once they have waited, saying why.
      await until(() => answered.length >= 3);
      const refused = answered.filter((response) => response.status === 503);
      expect(refused.length).toBeGreaterThanOrEqual(2);
      for (const response of refused) {
        expectProblem(response, 503, 'service-unavailable');
        expect(response.body.detail).toMatch(/other clients' requests hold the rest|2 requests working/);
      }
      expect(refused.some((response) => /other clients' requests/.test(String(response.body.detail)))).toBe(true);

      released = true;
      await Promise.all(releases.map((release) => release()));
      await Promise.all(sent);
    } finally {
      if (!released) await Promise.all(releases.map((release) => release()));
    }
  });
});
