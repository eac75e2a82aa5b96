/**
 * The named statements (`prepared()`, src/db/prepared-statements.ts) settle on one generic plan per
 * connection, made on an empty database, as a new deploy makes them: a statement PostgreSQL cannot cost
 * without its parameters' values (a LIMIT given as a parameter, a constant beside a partial index's
 * predicate) is planned again at every execution instead, which cost a list page or a delivery a third of
 * its database time (bench/results/history.md, session 8). The workload is the hot paths' statements: site
 * creates, reads and lists, visit creates with their deliveries, claimed from the queue and at birth, and a visit's
 * messages listed.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AppDatabase } from '../../src/db/database.js';
import { openTestDatabase } from '../helpers/app.js';
import { siteBody } from '../helpers/tenants.js';
import { createVisit, type VisitTenant } from '../helpers/visits.js';
import { type DeliveryHarness, startDeliveryHarness } from '../helpers/webhooks.js';

const databaseUrl = inject('databaseUrl');
/** PostgreSQL plans a named statement's first five executions for their values, then decides. */
const EXECUTIONS = 8;

describe.skipIf(!databaseUrl)('named statements on a new database', () => {
  let database: AppDatabase;
  let harness: DeliveryHarness;
  let v: VisitTenant;

  beforeAll(async () => {
    // One pooled connection (the notification listener has its own): its prepared statements are all of them.
    database = await openTestDatabase('ss_plans', 1);
    harness = await startDeliveryHarness({ database }, { started: false });
    v = await harness.visitTenant();
    const subscribed = await harness.t.http.post('/api/v1/webhook-subscriptions', {
      token: v.fullToken,
      json: { targetUrl: harness.receiver.endpoint().url, eventTypes: ['ticket.created'], secret: 'whsec-plans-test' },
    });
    expect(subscribed.status, subscribed.text).toBe(201);
  });
  afterAll(async () => {
    await harness?.close();
    await database?.close();
  });

  it('are each planned once, generically, after the hot paths ran a few times', async () => {
    const { t, worker } = harness;
    for (let at = 0; at < EXECUTIONS; at++) {
      const site = await t.http.post('/api/v1/sites', { token: v.fullToken, json: siteBody() });
      expect(site.status, site.text).toBe(201);
      expect((await t.http.get(`/api/v1/sites/${site.body.data.id}`, { token: v.token })).status).toBe(200);
      for (const size of [25, 100]) {
        const page = await t.http.get('/api/v1/sites', { token: v.token, query: { 'page[size]': size } });
        expect(page.status).toBe(200);
      }
      const visit = await createVisit(t, v);
      // One visit's messages (migration 0013's index).
      const message = await t.http.post('/api/v1/messages', {
        token: v.fullToken,
        json: { siteVisitId: visit.id, messageThread: 'Plans' },
      });
      expect(message.status, message.text).toBe(201);
      for (const size of [25, 100]) {
        const query = { siteVisitId: visit.id, 'page[size]': size };
        expect((await t.http.get('/api/v1/messages', { token: v.token, query })).status).toBe(200);
      }
    }
    // Those visits' deliveries from the queue, then visits whose deliveries the running worker claims at birth.
    await worker.processAll();
    await worker.start();
    for (let at = 0; at < EXECUTIONS; at++) {
      await createVisit(t, v);
      await worker.idle();
    }

    const statements = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
      select statement, generic_plans::int, custom_plans::int from pg_prepared_statements
      where name like 'ps\\_%'`.execute(database.db);
    expect(statements.rows.length).toBeGreaterThan(5);
    const replanned = statements.rows.filter((row) => row.custom_plans > 5).map((row) => row.statement);
    expect(replanned).toEqual([]);
  });
});
