/**
 * Fair claiming (issue 15 item 3): a worker's slots are shared out by tenant and by destination, not in
 * due order, and a tenant with nothing in flight gets an express slot when all are busy. The receivers
 * here hold every request open until the test releases them, so what is in flight is exactly what was
 * claimed: no timing is involved.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  deliveredNow,
  type Endpoint,
  localResolver,
  recordTestEvent,
  startTestWorker,
  TestReceiver,
  testWebhookConfig,
} from '../helpers/webhooks.js';

/** Two receivers: two destinations (host and port) for the worker. */
let receivers: [TestReceiver, TestReceiver];
let t: TestApp;
const workers: DeliveryWorker[] = [];
/** Releases every request held open so far and answers the later ones at once. */
const releases: Array<() => void> = [];

beforeAll(async () => {
  const first = await TestReceiver.start();
  receivers = [first, await TestReceiver.start(first.certificates)];
  const webhook = {
    ...testWebhookConfig(first.port),
    testAllowedDestinations: receivers.map((receiver) => `localhost:${receiver.port}`),
    concurrency: 4,
  };
  t = await startTestApp({ config: { webhook }, resolver: localResolver });
});
// A worker serves the whole database: each test's worker stops with it (each test has drained its
// deliveries), so the next test's worker is the only one claiming.
afterEach(async () => {
  for (const release of releases) release();
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});
afterAll(async () => {
  await t?.close();
  for (const receiver of receivers ?? []) await receiver.close();
});

/** An endpoint that holds every request open until `release()`, then answers 200. */
function heldEndpoint(receiver: TestReceiver): Endpoint & { release(): void } {
  let open = true;
  const waiting: Array<() => void> = [];
  const endpoint = receiver.endpoint(async () => {
    if (open) await new Promise<void>((resolve) => waiting.push(resolve));
    return 200;
  });
  const release = () => {
    open = false;
    for (const resolve of waiting.splice(0)) resolve();
  };
  releases.push(release);
  return Object.assign(endpoint, { release });
}

async function subscribe(token: string, endpoint: Endpoint) {
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token,
    json: { targetUrl: endpoint.url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
  });
  expect(created.status).toBe(201);
}

async function startWorker() {
  const worker = await startTestWorker(t, receivers[0], { config: { concurrency: 4 } });
  workers.push(worker);
  return worker;
}

async function events(tenantId: string, count: number) {
  const recorded = [];
  for (let index = 0; index < count; index++) recorded.push(await recordTestEvent(t, tenantId));
  return recorded;
}

describe('fair claiming', () => {
  it("a tenant's backlog to a receiver that does not answer leaves another tenant's event an express slot", async () => {
    const busy = await tenantWithToken(t);
    const other = await tenantWithToken(t);
    const slow = heldEndpoint(receivers[0]);
    const fast = receivers[1].endpoint();
    await subscribe(busy.token, slow);
    await subscribe(other.token, fast);
    const worker = await startWorker();

    const backlog = await events(busy.tenantId, 12);
    // An idle worker gives the one tenant with due deliveries all four slots, and no more.
    await slow.waitFor(4);
    const event = await recordTestEvent(t, other.tenantId);
    const [request] = await fast.waitFor(1);
    expect(request!.headers['x-svc-event-id']).toBe(event.id);
    expect(slow.requests).toHaveLength(4);

    slow.release();
    for (const { id } of backlog) await deliveredNow(t, worker, id);
  });

  it('shares the slots between tenants whatever fell due first', async () => {
    const first = await tenantWithToken(t);
    const second = await tenantWithToken(t);
    const [a, b] = [heldEndpoint(receivers[0]), heldEndpoint(receivers[0])];
    await subscribe(first.token, a);
    await subscribe(second.token, b);
    // The first tenant's ten fell due before any of the second's; the worker starts after both.
    const recorded = [...(await events(first.tenantId, 10)), ...(await events(second.tenantId, 10))];
    const worker = await startWorker();

    await Promise.all([a.waitFor(2), b.waitFor(2)]);
    expect([a.requests.length, b.requests.length]).toEqual([2, 2]);
    a.release();
    b.release();
    for (const { id } of recorded) await deliveredNow(t, worker, id);
  });

  it("shares one tenant's slots between its destinations whatever fell due first", async () => {
    const tenant = await tenantWithToken(t);
    const [here, there] = [heldEndpoint(receivers[0]), heldEndpoint(receivers[1])];
    await subscribe(tenant.token, here);
    const earlier = await events(tenant.tenantId, 10);
    await subscribe(tenant.token, there);
    const later = await events(tenant.tenantId, 4);
    const worker = await startWorker();

    await Promise.all([here.waitFor(2), there.waitFor(2)]);
    expect([here.requests.length, there.requests.length]).toEqual([2, 2]);
    here.release();
    there.release();
    for (const { id } of [...earlier, ...later]) await deliveredNow(t, worker, id);
  });
});
