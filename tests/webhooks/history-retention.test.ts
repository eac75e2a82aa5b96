/**
 * WEBHOOK_HISTORY_RETENTION: the maintenance pass deletes finished deliveries, the events no delivery names
 * any more and closed listeners once older than the retention, and nothing else: not a pending delivery or
 * its event, not a younger one, not the visits the events were about. The app's clock dates what it writes
 * (a database of this file's own, so nothing of other files is in the walk).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { DeliveryHistoryRetention } from '../../src/modules/outbox/history-retention.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { Maintenance } from '../../src/runtime/maintenance.js';
import type { TestApp } from '../helpers/app.js';
import { tokenFor } from '../helpers/tenants.js';
import { createVisit, type VisitTenant, visitTenant } from '../helpers/visits.js';
import { type DeliveryHarness, startDeliveryHarness } from '../helpers/webhooks.js';

const DAY = 24 * 3600 * 1000;
const RETENTION = 30 * DAY;
const clock = new ManualClock(new Date('2020-01-01T00:00:00Z'));

let h: DeliveryHarness;
let t: TestApp;
let worker: DeliveryWorker;
beforeAll(async () => {
  // The worker is driven by processAll: a delivery stays pending until a test drains the queue.
  h = await startDeliveryHarness({ clock }, { started: false });
  ({ t, worker } = h);
});
afterAll(async () => h?.close());

async function subscribe(v: VisitTenant, answer: number) {
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: v.fullToken,
    json: {
      targetUrl: h.receiver.endpoint(() => answer).url,
      eventTypes: ['ticket.created'],
      secret: `whsec ${randomUUID()}`,
    },
  });
  expect(created.status).toBe(201);
  return created.body.data.id as string;
}

const count = async (table: 'events' | 'webhook_deliveries', tenantId: string) =>
  Number(
    (
      await t.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
    ).n,
  );

const statuses = async (tenantId: string) =>
  (
    await t.database.db
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('tenant_id', '=', tenantId)
      .orderBy('seq')
      .execute()
  ).map((row) => row.status);

/** The maintenance samples of GET /metrics (the operator's), by series. */
async function purgedMetrics(): Promise<Record<string, number>> {
  const text = (await t.http.get('/metrics', { token: t.adminToken })).text;
  return Object.fromEntries(
    [...text.matchAll(/^(maintenance_\w+\{[^}]*\}) (\d+)$/gm)].map((match) => [match[1]!, Number(match[2])]),
  );
}

/** A listener closed at `at`, as `svc listen` leaves one: its row and its inactive subscription. */
async function closedListener(tenantId: string, at: Date): Promise<string> {
  const id = `whl_retention${Math.random().toString(36).slice(2, 10)}`;
  await t.database.db
    .insertInto('webhook_subscriptions')
    .values({
      id,
      tenant_id: tenantId,
      target_url: `listener://${id}`,
      event_types: ['ticket.created'],
      is_active: false,
      signing_version: 'legacy',
      created_at: at,
      updated_at: at,
    })
    .execute();
  await t.database.db
    .insertInto('webhook_listeners')
    .values({ id, tenant_id: tenantId, state: 'closed', alive_until: at, created_at: at, closed_at: at })
    .execute();
  return id;
}

it('deletes finished deliveries, unnamed events and closed listeners past the retention, and nothing else', async () => {
  // Written on 1 January: delivered, failed, events of a tenant without subscriptions, one left pending.
  const delivered = await visitTenant(t);
  await subscribe(delivered, 200);
  const failing = await visitTenant(t);
  await subscribe(failing, 500);
  const unsubscribed = await visitTenant(t);
  const oldVisits = [
    await createVisit(t, delivered),
    await createVisit(t, delivered),
    await createVisit(t, failing),
    await createVisit(t, unsubscribed),
  ];
  await worker.processAll();
  await createVisit(t, delivered); // pending: the worker is not driven again before the purge
  const oldListener = await closedListener(unsubscribed.tenantId, clock.now());
  expect(await statuses(delivered.tenantId)).toEqual(['succeeded', 'succeeded', 'pending']);
  expect(await statuses(failing.tenantId)).toEqual(['failed']);

  // Written on 1 June, inside a retention of 30 days then (pending as well).
  clock.set(new Date('2020-06-01T00:00:00Z'));
  const fresh = { ...delivered, fullToken: await tokenFor(t, delivered) };
  await createVisit(t, fresh);
  const youngListener = await closedListener(unsubscribed.tenantId, clock.now());

  const maintenance = new Maintenance(t.database.db, clock, createLogger(t.config), {
    deliveryRetentionMs: RETENTION,
    registry: t.metrics.registry,
  });
  await maintenance.runOnce();

  expect(await statuses(delivered.tenantId)).toEqual(['pending', 'pending']);
  expect(await count('events', delivered.tenantId)).toBe(2);
  expect(await count('webhook_deliveries', failing.tenantId)).toBe(0);
  expect(await count('events', failing.tenantId)).toBe(0);
  expect(await count('events', unsubscribed.tenantId)).toBe(0);
  const listeners = (await t.database.db.selectFrom('webhook_listeners').select('id').execute()).map((row) => row.id);
  expect(listeners).toEqual([youngListener]);
  const subscription = await t.database.db
    .selectFrom('webhook_subscriptions')
    .select('id')
    .where('id', '=', oldListener)
    .executeTakeFirst();
  expect(subscription).toBeUndefined();

  // The visits themselves stay: only their events' copies go.
  const visits = await t.database.db
    .selectFrom('site_visits')
    .select('id')
    .where(
      'id',
      'in',
      oldVisits.map((visit) => visit.id),
    )
    .execute();
  expect(visits).toHaveLength(oldVisits.length);
  const read = await t.http.get(`/api/v1/site-visits/${oldVisits[0]!.id}`, { token: fresh.fullToken });
  expect(read.status).toBe(200);

  // An operator sees what the pass purged in the metrics: 3 finished deliveries, their 3 events and the
  // unsubscribed tenant's, 1 listener.
  expect(await purgedMetrics()).toEqual({
    'maintenance_passes_total{outcome="completed"}': 1,
    'maintenance_passes_total{outcome="failed"}': 0,
    'maintenance_purged_rows_total{kind="idempotency_keys"}': 0,
    'maintenance_purged_rows_total{kind="orphan_blobs"}': 0,
    'maintenance_purged_rows_total{kind="deliveries"}': 3,
    'maintenance_purged_rows_total{kind="events"}': 4,
    'maintenance_purged_rows_total{kind="listeners"}': 1,
  });

  // Once finished, the old pending delivery goes at a later pass; the young one stays.
  await worker.processAll();
  await maintenance.runOnce();
  expect(await statuses(delivered.tenantId)).toEqual(['succeeded']);
  expect(await count('events', delivered.tenantId)).toBe(1);
  expect(await purgedMetrics()).toMatchObject({
    'maintenance_passes_total{outcome="completed"}': 2,
    'maintenance_purged_rows_total{kind="deliveries"}': 4,
    'maintenance_purged_rows_total{kind="events"}': 5,
  });
});

it('a pass deletes at most its chunks of each walk; the next goes on from there', async () => {
  clock.set(new Date('2021-01-01T00:00:00Z'));
  const v = await visitTenant(t);
  await subscribe(v, 200);
  for (let i = 0; i < 3; i++) await createVisit(t, v);
  await worker.processAll();
  clock.set(new Date('2021-03-01T00:00:00Z'));

  // What the last test left (one delivery, one event) and these three: four of each, all past 30 days.
  const retention = new DeliveryHistoryRetention(t.database.db, {
    retentionMs: RETENTION,
    chunkSize: 1,
    chunksPerPass: 3,
  });
  const passes = [await retention.purge(clock.now()), await retention.purge(clock.now())];
  expect(passes.map((pass) => pass.deliveries)).toEqual([3, 1]);
  // The third visit's event is still named by its delivery in the first pass: it goes in the second.
  expect(passes.map((pass) => pass.events)).toEqual([3, 1]);
  expect(await count('webhook_deliveries', v.tenantId)).toBe(0);
  expect(await count('events', v.tenantId)).toBe(0);
  expect(await retention.purge(clock.now())).toEqual({ deliveries: 0, events: 0, listeners: 0 });
});

it('keeps everything when the retention is 0', async () => {
  const v = await visitTenant(t);
  await createVisit(t, v);
  clock.set(new Date('2030-01-01T00:00:00Z'));
  await new Maintenance(t.database.db, clock, createLogger(t.config), { deliveryRetentionMs: 0 }).runOnce();
  expect(await count('events', v.tenantId)).toBe(1);
});
