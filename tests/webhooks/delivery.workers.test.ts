/**
 * Workers and the queue under concurrency and faults: two workers on one database deliver every event
 * exactly once; a worker that dies mid-delivery loses nothing (its lease runs out, another worker claims
 * the delivery again, within the budget); a stopping worker finishes and records what it has in flight;
 * workers wake on commit (LISTEN/NOTIFY), also after losing the listening connection.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  type Endpoint,
  localResolver,
  createTestWorker,
  DELIVERED_AFTER_LOST_ATTEMPT,
  deliveredNow,
  readDeliveries,
  recordTestEvent,
  secondDatabaseHandle,
  startTestWorker,
  TestReceiver,
  testWebhookConfig,
} from '../helpers/webhooks.js';

let receiver: TestReceiver;
let t: TestApp;
const workers: DeliveryWorker[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  receiver = await TestReceiver.start();
  t = await startTestApp({ config: { webhook: testWebhookConfig(receiver.port) }, resolver: localResolver });
});
// Every worker serves the whole database: each test's workers stop with it, and each test leaves every
// delivery settled, so the next test's workers find only the next test's deliveries.
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});
afterAll(async () => {
  for (const close of closers) await close();
  await t?.close();
  await receiver?.close();
});

async function worker(options: Parameters<typeof startTestWorker>[2] = {}) {
  const started = await startTestWorker(t, receiver, options);
  workers.push(started);
  return started;
}

/** A worker driven by processAll, whose clock runs `aheadMs` early: leases taken now have run out for it. */
function drainedWorker(options: Parameters<typeof createTestWorker>[2] = {}, aheadMs = 0) {
  const clock = { now: () => new Date(Date.now() + aheadMs) };
  const created = createTestWorker(t, receiver, { ...options, deps: { clock, ...options.deps } });
  workers.push(created);
  return created;
}

async function subscribed(endpoint: Endpoint) {
  const tenant = await tenantWithToken(t);
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: tenant.token,
    json: { targetUrl: endpoint.url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
  });
  expect(created.status).toBe(201);
  return tenant;
}

describe('delivery workers', () => {
  it('two workers on one database deliver every event exactly once', async () => {
    const second = secondDatabaseHandle(t);
    closers.push(second.close);
    // Generous time limits: a timed-out attempt is retried (at least once), and this test is about claims.
    const patient = { timeoutMs: 20_000, leaseMs: 30_000 };
    const one = drainedWorker({ config: patient });
    const other = drainedWorker({ database: second.database, config: patient });
    const endpoint = receiver.endpoint();
    const tenant = await subscribed(endpoint);

    const events = [];
    for (let index = 0; index < 40; index++) events.push(await recordTestEvent(t, tenant.tenantId));
    // Both drain the same queue at once: their claims race for the same due deliveries.
    const [byOne, byOther] = await Promise.all([one.processAll(), other.processAll()]);
    expect(byOne + byOther).toBe(40);

    const received = endpoint.requests.map((request) => request.headers['x-svc-event-id']);
    expect(received).toHaveLength(40);
    expect(new Set(received)).toEqual(new Set(events.map((event) => event.id)));
    expect(new Set(endpoint.requests.map((request) => request.headers['x-svc-attempt']))).toEqual(new Set(['1']));
    const all = await readDeliveries(t, { tenantId: tenant.tenantId });
    expect(all).toHaveLength(40);
    expect(all.every((delivery: any) => delivery.status === 'succeeded' && delivery.attempts === 1)).toBe(true);
  });

  it('loses nothing when a worker dies mid-delivery: the lease runs out and another worker delivers', async () => {
    const lease = { leaseMs: 1_000 };
    const doomed = await worker({ config: lease });
    const endpoint = receiver.endpoint((_request, index) => (index === 0 ? 'hang' : 200));
    const tenant = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);

    await endpoint.waitFor(1);
    await doomed.abandon();
    const rescuer = drainedWorker({}, 2 * lease.leaseMs);

    const [delivery] = await deliveredNow(t, rescuer, event.id);
    expect(delivery).toMatchObject(DELIVERED_AFTER_LOST_ATTEMPT);
    expect(
      endpoint.requests.map((request) => [request.headers['x-svc-event-id'], request.headers['x-svc-attempt']]),
    ).toEqual([
      [event.id, '1'],
      [event.id, '2'],
    ]);
  });

  it('never exceeds the budget when the worker dies during the last attempt', async () => {
    const settings = { leaseMs: 1_000, maxAttempts: 1 };
    const doomed = await worker({ config: settings });
    const endpoint = receiver.endpoint(() => 'hang');
    const tenant = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);

    await endpoint.waitFor(1);
    await doomed.abandon();
    const rescuer = drainedWorker({ config: { maxAttempts: 1 } }, 2 * settings.leaseMs);

    const [delivery] = await deliveredNow(t, rescuer, event.id);
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: "no outcome recorded: the worker's lease expired",
    });
    expect(delivery.attemptLog).toHaveLength(1);
    expect(endpoint.requests).toHaveLength(1);
  });

  it('finishes and records in-flight attempts when stopped', async () => {
    const stopping = await worker();
    const endpoint = receiver.endpoint(async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return 200;
    });
    const tenant = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);
    await endpoint.waitFor(1);
    await stopping.stop();
    const response = await t.http.get('/admin/v1/deliveries', { token: t.adminToken, query: { eventId: event.id } });
    expect(response.body.data).toMatchObject([{ status: 'succeeded', attempts: 1 }]);
  });

  it('wakes on commit: deliveries arrive long before the poll interval comes round', async () => {
    await worker({ config: { pollIntervalMs: 60_000 } });
    const endpoint = receiver.endpoint();
    const tenant = await subscribed(endpoint);
    // Let the worker's first pass (at start) finish, so only notifications can wake it.
    await new Promise((resolve) => setTimeout(resolve, 50));

    const latencies: number[] = [];
    for (let index = 0; index < 20; index++) {
      await recordTestEvent(t, tenant.tenantId);
      const committed = Date.now();
      const [request] = (await endpoint.waitFor(index + 1, 60_000)).slice(index);
      latencies.push(request!.receivedAt - committed);
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(latencies.length / 2)]!;
    console.info(`commit → receipt over 20 sequential events: p50 ${p50} ms, max ${latencies.at(-1)} ms`);
    // Woken by the commit, not the 60 s poll: every receipt comes well before it, however loaded the machine.
    expect(latencies.at(-1)!).toBeLessThan(20_000);
  });

  it('keeps waking on commit after the listening connection is lost (PostgreSQL)', async ({ skip }) => {
    if (t.database.kind !== 'postgres') skip();
    await worker({ config: { pollIntervalMs: 60_000 } });
    const endpoint = receiver.endpoint();
    const tenant = await subscribed(endpoint);

    const terminated = await sql<{ count: number }>`
      select count(pg_terminate_backend(pid))::int as count from pg_stat_activity
      where application_name = ${`site-services listener webhook_deliveries ${process.pid}`}`.execute(t.database.db);
    expect(terminated.rows[0]!.count).toBeGreaterThan(0);

    const event = await recordTestEvent(t, tenant.tenantId);
    await endpoint.waitFor(1, 60_000);
    expect(endpoint.requests[0]!.headers['x-svc-event-id']).toBe(event.id);
    // And later commits wake it through the new connection.
    const next = await recordTestEvent(t, tenant.tenantId);
    const [, request] = await endpoint.waitFor(2, 60_000);
    expect(request!.headers['x-svc-event-id']).toBe(next.id);
  });
});
