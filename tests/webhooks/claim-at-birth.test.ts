/**
 * Deliveries claimed at birth (outbox/birth-claims.ts): while a worker of the same process runs with a
 * shared slot free, a visit create (or any event recorded in a `transaction()`) queues its event's delivery
 * already claimed for its first attempt, and the worker delivers it after the commit without claiming it
 * from the queue. A create that queues nothing, or a transaction that rolls back, gives the claim back; with
 * every slot taken the delivery is queued as before. A claim holds no slot while its create runs: a delivery
 * whose slots filled meanwhile waits for one, unless its lease would run out first (then it is left to its
 * lease). A worker that dies holding a claim made at birth leaves it to its lease like any other.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../../src/db/transaction.js';
import { newId } from '../../src/lib/ids.js';
import { recordEvent } from '../../src/modules/outbox/service.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import type { TestApp } from '../helpers/app.js';
import { createVisit, visitBody, type VisitTenant } from '../helpers/visits.js';
import {
  createTestWorker,
  type DeliveryHarness,
  DELIVERED_AFTER_LOST_ATTEMPT,
  deliveredNow,
  type Endpoint,
  readDeliveries,
  settled,
  startDeliveryHarness,
  startTestWorker,
  waitForDeliveries,
} from '../helpers/webhooks.js';

let harness: DeliveryHarness;
let t: TestApp;
/** The workers a test starts: each stops with its test, which leaves nothing in flight for the next. */
const workers: DeliveryWorker[] = [];

beforeAll(async () => {
  // Four shared slots (testWebhookConfig), so that a test can take them all; the harness's own worker stays unstarted.
  harness = await startDeliveryHarness({}, { started: false });
  t = harness.t;
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});
afterAll(() => harness?.close());

async function startedWorker(options: Parameters<typeof startTestWorker>[2] = {}) {
  const worker = await startTestWorker(t, harness.receiver, options);
  workers.push(worker);
  return worker;
}

/** How many deliveries this app's workers claimed so far, from the queue and at birth. */
async function claims(): Promise<{ queue: number; birth: number }> {
  const { values } = await t.metrics.deliveryClaims.get();
  const count = (how: string) => values.find((value) => value.labels.how === how)?.value ?? 0;
  return { queue: count('queue'), birth: count('birth') };
}

async function subscribedTenant(endpoint: Endpoint): Promise<VisitTenant> {
  const v = await harness.visitTenant();
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: v.fullToken,
    json: { targetUrl: endpoint.url, eventTypes: ['ticket.created'], secret: `whsec-${randomUUID()}` },
  });
  expect(created.status, created.text).toBe(201);
  return v;
}

/** Resolves `release()`d replies: the receiver holds each request until then. */
function heldReplies() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const responder = async () => {
    await released;
    return 200;
  };
  return { responder, release };
}

/**
 * A tenant subscribed to an endpoint that holds every reply until `release()`, with `busy` of its visits'
 * attempts held there (each taking one of the worker's shared slots).
 */
async function heldAttempts(busy: number) {
  const held = heldReplies();
  const endpoint = harness.receiver.endpoint(held.responder);
  const v = await subscribedTenant(endpoint);
  for (let index = 0; index < busy; index++) await createVisit(t, v);
  await endpoint.waitFor(busy);
  return { release: held.release, endpoint, v };
}

/** Two ticket.created events of `v`, recorded in one transaction (so both are claimed before either starts). */
function twoEventsInOneTransaction(v: VisitTenant) {
  return transaction(t.database.db, undefined, async (tx) => {
    const first = await recordEvent(tx, v.tenantId, testTicketCreated(v));
    return [first, await recordEvent(tx, v.tenantId, testTicketCreated(v))] as const;
  });
}

/** A ticket.created event of a visit of `v`, as a visit create records it. */
function testTicketCreated(v: VisitTenant) {
  return {
    type: 'ticket.created' as const,
    occurredAt: new Date(),
    resourceId: newId('visit'),
    data: { clientTicketNumber: `T-${randomUUID().slice(0, 8)}`, clientSiteId: v.siteCode, status: 'New' },
  };
}

describe('deliveries claimed at birth', () => {
  it('are queued claimed by the running worker, which delivers them without claiming them from the queue', async () => {
    const worker = await startedWorker();
    const held = heldReplies();
    const endpoint = harness.receiver.endpoint(held.responder);
    const v = await subscribedTenant(endpoint);
    const before = await claims();

    const keyed = await t.http.post('/api/v1/site-visits', {
      token: v.fullToken,
      json: visitBody(v),
      headers: { 'idempotency-key': `key-${randomUUID()}` },
    });
    expect(keyed.status, keyed.text).toBe(201);
    const unkeyed = await createVisit(t, v);
    await endpoint.waitFor(2);

    // Claimed for their first attempt before the receiver has answered.
    const pending = await readDeliveries(t, { tenantId: v.tenantId });
    expect(pending).toHaveLength(2);
    for (const delivery of pending) expect(delivery).toMatchObject({ status: 'pending', attempts: 1, attemptLog: [] });

    held.release();
    await worker.idle();
    const delivered = await readDeliveries(t, { tenantId: v.tenantId });
    expect(settled(delivered)).toBe(true);
    for (const delivery of delivered) {
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(delivery.attemptLog).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200 })]);
    }
    expect(endpoint.requests.map((request) => request.headers['x-svc-attempt'])).toEqual(['1', '1']);
    expect(new Set(endpoint.requests.map((request) => request.headers['x-svc-delivery-id']))).toEqual(
      new Set(delivered.map((delivery) => delivery.deliveryId)),
    );
    expect([keyed.body.data.id, unkeyed.id]).toEqual([
      expect.stringMatching(/^visit_/),
      expect.stringMatching(/^visit_/),
    ]);
    expect(await claims()).toEqual({ queue: before.queue, birth: before.birth + 2 });
  });

  it('carry the event as stored: its retry, claimed from the queue, sends the same body byte for byte', async () => {
    const worker = await startedWorker();
    const endpoint = harness.receiver.endpoint((_request, index) => (index === 0 ? 500 : 200));
    const v = await subscribedTenant(endpoint);
    const before = await claims();
    await createVisit(t, v);
    const [first, retry] = await endpoint.waitFor(2);
    await worker.idle();

    expect(await claims()).toEqual({ queue: before.queue + 1, birth: before.birth + 1 });
    expect([first!.headers['x-svc-attempt'], retry!.headers['x-svc-attempt']]).toEqual(['1', '2']);
    expect(retry!.body.equals(first!.body)).toBe(true);
  });

  it('give the slot back when the create queues nothing: a replayed create', async () => {
    const worker = await startedWorker();
    const endpoint = harness.receiver.endpoint();
    const v = await subscribedTenant(endpoint);
    // No ticket number: the replays pass the create's reads, and so ask for a claim each.
    const body = visitBody(v, { clientTicketNumber: undefined });
    const headers = { 'idempotency-key': `key-${randomUUID()}` };
    const before = await claims();
    for (let index = 0; index < 6; index++) {
      const response = await t.http.post('/api/v1/site-visits', { token: v.fullToken, json: body, headers });
      expect(response.status, response.text).toBe(201);
    }
    // More replays than slots, and still a slot for the next event: every replay's claim was given back.
    await createVisit(t, v);
    await endpoint.waitFor(2);
    await worker.idle();
    expect(await claims()).toEqual({ queue: before.queue, birth: before.birth + 2 });
    const delivered = await readDeliveries(t, { tenantId: v.tenantId });
    expect(delivered.map((delivery) => [delivery.status, delivery.attempts])).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
  });

  it('are not made while every shared slot is taken: the delivery is queued and claimed from the queue', async () => {
    const worker = await startedWorker();
    const before = await claims();
    const held = await heldAttempts(4);
    const { v } = held;

    await createVisit(t, v);
    const queued = (await readDeliveries(t, { tenantId: v.tenantId })).filter((delivery) => delivery.attempts === 0);
    expect(queued).toHaveLength(1);

    held.release();
    await waitForDeliveries(t, queued[0].eventId, settled);
    await worker.idle();
    expect(await claims()).toEqual({ queue: before.queue + 1, birth: before.birth + 4 });
    expect(
      (await readDeliveries(t, { tenantId: v.tenantId })).every((delivery) => delivery.status === 'succeeded'),
    ).toBe(true);
  });

  it('wait for a slot when the slots filled while their create ran, and start as soon as one is free', async () => {
    const worker = await startedWorker();
    const before = await claims();
    const held = await heldAttempts(3);
    const { endpoint, v } = held;

    // One shared slot free: both events are claimed at birth, and only one can start.
    const [first, second] = await twoEventsInOneTransaction(v);
    await endpoint.waitFor(4);
    const waiting = (await readDeliveries(t, { tenantId: v.tenantId })).filter(
      (delivery) => delivery.eventId === first.id || delivery.eventId === second.id,
    );
    expect(waiting.map((delivery) => delivery.attempts)).toEqual([1, 1]);
    expect(endpoint.requests).toHaveLength(4);

    held.release();
    await endpoint.waitFor(5);
    await worker.idle();
    expect(await claims()).toEqual({ queue: before.queue, birth: before.birth + 5 });
    const delivered = await readDeliveries(t, { tenantId: v.tenantId });
    expect(delivered.map((delivery) => [delivery.status, delivery.attempts])).toEqual(
      Array.from({ length: 5 }, () => ['succeeded', 1]),
    );
  });

  it('are left to their lease when it would run out before a slot frees, then claimed again from the queue', async () => {
    let ahead = 0;
    const worker = await startedWorker({ deps: { clock: { now: () => new Date(Date.now() + ahead) } } });
    const held = await heldAttempts(3);
    const { endpoint, v } = held;
    const [, late] = await twoEventsInOneTransaction(v);
    await endpoint.waitFor(4);

    // Past the point where an attempt started now could outlast the lease (10 s; attempts take up to 5 s).
    ahead = 6_000;
    held.release();
    await worker.idle();
    await worker.stop();
    expect(endpoint.requests.map((request) => request.headers['x-svc-event-id'])).not.toContain(late.id);
    expect(await readDeliveries(t, { tenantId: v.tenantId })).toContainEqual(
      expect.objectContaining({ eventId: late.id, status: 'pending', attempts: 1 }),
    );

    const rescuer = createTestWorker(t, harness.receiver, {
      deps: { clock: { now: () => new Date(Date.now() + 20_000) } },
    });
    workers.push(rescuer);
    const [delivery] = await deliveredNow(t, rescuer, late.id);
    expect(delivery).toMatchObject(DELIVERED_AFTER_LOST_ATTEMPT);
  });

  it('are made for an event recorded in a transaction too, and given back when the transaction rolls back', async () => {
    const worker = await startedWorker();
    const endpoint = harness.receiver.endpoint();
    const v = await subscribedTenant(endpoint);
    const before = await claims();

    // More rolled-back claims than slots: each one's slot comes back with its rollback.
    for (let index = 0; index < 6; index++) {
      await expect(
        transaction(t.database.db, undefined, async (tx) => {
          await recordEvent(tx, v.tenantId, testTicketCreated(v));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
    }
    const committed = await transaction(t.database.db, undefined, (tx) =>
      recordEvent(tx, v.tenantId, testTicketCreated(v)),
    );
    await endpoint.waitFor(1);
    await worker.idle();

    expect(endpoint.requests.map((request) => request.headers['x-svc-event-id'])).toEqual([committed.id]);
    expect(await readDeliveries(t, { tenantId: v.tenantId })).toMatchObject([
      { eventId: committed.id, status: 'succeeded', attempts: 1 },
    ]);
    expect(await claims()).toEqual({ queue: before.queue, birth: before.birth + 1 });
  });

  it('are left to their lease by a worker that dies holding them, then claimed again from the queue', async () => {
    const lease = { leaseMs: 1_000 };
    const doomed = await startedWorker({ config: lease });
    const endpoint = harness.receiver.endpoint((_request, index) => (index === 0 ? 'hang' : 200));
    const v = await subscribedTenant(endpoint);
    const before = await claims();
    await createVisit(t, v);
    await endpoint.waitFor(1);
    await doomed.abandon();
    expect((await claims()).birth).toBe(before.birth + 1);

    // A worker whose clock is past the lease finds it due again.
    const clock = { now: () => new Date(Date.now() + 2 * lease.leaseMs) };
    const rescuer = createTestWorker(t, harness.receiver, { deps: { clock } });
    workers.push(rescuer);
    const [held] = await readDeliveries(t, { tenantId: v.tenantId });
    const [delivery] = await deliveredNow(t, rescuer, held.eventId);
    expect(delivery).toMatchObject(DELIVERED_AFTER_LOST_ATTEMPT);
  });
});
