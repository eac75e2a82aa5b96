/**
 * Signed delivery to a real HTTPS receiver (SPEC: Events): the envelope, every header, the v1 signature
 * checked by an independent verifier, retries, the attempt budget, redirects, inactive subscriptions,
 * legacy signing, upgrade and rotation, and the operator's retry.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';
import {
  createTestWorker,
  deliveredNow,
  type Endpoint,
  localResolver,
  recordTestEvent,
  TestReceiver,
  testWebhookConfig,
  verifyLegacy,
  verifyV1,
} from '../helpers/webhooks.js';

let receiver: TestReceiver;
let t: TestApp;
let worker: DeliveryWorker;
const extraWorkers: DeliveryWorker[] = [];

beforeAll(async () => {
  receiver = await TestReceiver.start();
  t = await startTestApp({ config: { webhook: testWebhookConfig(receiver.port) }, resolver: localResolver });
  // Driven by processAll (helpers/webhooks.ts deliveredNow): each test drains the queue, then reads the outcome.
  worker = createTestWorker(t, receiver);
});
afterAll(async () => {
  await Promise.all([worker?.stop(), ...extraWorkers.map((extra) => extra.stop())]);
  await t?.close();
  await receiver?.close();
});

const ALL_TYPES = [
  'ticket.created',
  'rep.assigned',
  'job.scheduled',
  'schedule.updated',
  'job.dispatched',
  'job.completed',
  'deliverables.transmitted',
];

/** A tenant with one v1 subscription to the endpoint. */
async function subscribed(endpoint: Endpoint, eventTypes: string[] = ALL_TYPES) {
  const tenant = await tenantWithToken(t);
  const secret = `whsec ${randomUUID()} ✓`;
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: tenant.token,
    json: { targetUrl: endpoint.url, eventTypes, secret },
  });
  expect(created.status).toBe(201);
  return { tenant, secret, subscription: created.body.data };
}

describe('webhook delivery', () => {
  it('POSTs the stored envelope with every header and a v1 signature that an independent verifier accepts', async () => {
    const endpoint = receiver.endpoint();
    const { tenant, secret, subscription } = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId, 'ticket.created', {
      clientTicketNumber: 'CT-1',
      clientSiteId: 'S-1',
    });

    const [delivery] = await deliveredNow(t, worker, event.id);
    const [request] = endpoint.requests;
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-svc-event-id']).toBe(event.id);
    expect(request!.headers['x-svc-event-type']).toBe('ticket.created');
    expect(request!.headers['x-svc-delivery-id']).toBe(delivery.deliveryId);
    expect(request!.headers['x-svc-attempt']).toBe('1');
    expect(request!.headers['x-svc-signature-alg']).toBe('hmac-sha256');
    expect(request!.headers['x-svc-signature-version']).toBe('v1');
    expect(Math.abs(Number(request!.headers['x-svc-timestamp']) - Date.now() / 1000)).toBeLessThan(5);

    const verified = verifyV1(request!.headers, request!.body, secret);
    expect(verified).toMatchObject({ ok: true });
    expect(verifyV1(request!.headers, request!.body, `${secret}x`)).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    expect(verifyV1(request!.headers, request!.body, secret, Math.floor(Date.now() / 1000) + 301)).toMatchObject({
      ok: false,
    });

    const body = JSON.parse(request!.body.toString('utf8'));
    expect(Object.keys(body).sort()).toEqual([
      'data',
      'id',
      'occurredAt',
      'payloadVersion',
      'resourceId',
      'resourceType',
      'type',
    ]);
    expect(body).toMatchObject({
      id: event.id,
      type: 'ticket.created',
      occurredAt: event.occurred_at.toISOString(),
      resourceType: 'site-visits',
      resourceId: event.resource_id,
      payloadVersion: event.payload_version,
      data: { clientTicketNumber: 'CT-1', clientSiteId: 'S-1', status: 'New' },
    });
    expect(body.resourceId).toMatch(/^visit_/);
    expect(body.payloadVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    expect(delivery).toMatchObject({
      eventId: event.id,
      eventType: 'ticket.created',
      subscriptionId: subscription.id,
      tenantId: tenant.tenantId,
      status: 'succeeded',
      attempts: 1,
      attemptLog: [{ attempt: 1, statusCode: 200, error: null }],
    });
    expect(delivery.attemptLog[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(endpoint.requests).toHaveLength(1);
  });

  it('queues one delivery per matching active subscription, and none for types it does not want', async () => {
    const wanted = receiver.endpoint();
    const { tenant } = await subscribed(wanted, ['job.dispatched']);
    const second = receiver.endpoint();
    const again = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: { targetUrl: second.url, eventTypes: ['job.dispatched', 'job.completed'], secret: 'another secret of 16+' },
    });
    expect(again.status).toBe(201);

    const ignored = await recordTestEvent(t, tenant.tenantId, 'ticket.created');
    const dispatched = await recordTestEvent(t, tenant.tenantId, 'job.dispatched');
    const deliveries = await deliveredNow(t, worker, dispatched.id);
    expect(deliveries).toHaveLength(2);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(['succeeded', 'succeeded']);
    expect(new Set(deliveries.map((delivery) => delivery.deliveryId)).size).toBe(2);
    expect((await admin(t, 'GET', `/admin/v1/deliveries?eventId=${ignored.id}`)).body.data).toEqual([]);
    expect(wanted.requests.map((request) => request.headers['x-svc-event-id'])).toEqual([dispatched.id]);
    expect(second.requests.map((request) => request.headers['x-svc-event-id'])).toEqual([dispatched.id]);
  });

  it('publishes lifecycle events only while webhookAccess and apiEnabled are on; ticket.created always', async () => {
    const endpoint = receiver.endpoint();
    const { tenant } = await subscribed(endpoint);
    expect((await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { apiEnabled: false })).status).toBe(200);
    const lifecycle = await recordTestEvent(t, tenant.tenantId, 'job.scheduled', {
      scheduledDate: '2026-12-01',
      etaTime: null,
    });
    const created = await recordTestEvent(t, tenant.tenantId, 'ticket.created');
    await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { apiEnabled: true, webhookAccess: false });
    const lifecycle2 = await recordTestEvent(t, tenant.tenantId, 'rep.assigned', {
      fieldRepName: 'Awaiting reassignment',
    });
    const created2 = await recordTestEvent(t, tenant.tenantId, 'ticket.created');
    await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { webhookAccess: true });
    const lifecycle3 = await recordTestEvent(t, tenant.tenantId, 'job.completed');

    await deliveredNow(t, worker, lifecycle3.id);
    await deliveredNow(t, worker, created2.id);
    for (const skipped of [lifecycle, lifecycle2]) {
      expect((await admin(t, 'GET', `/admin/v1/deliveries?eventId=${skipped.id}`)).body.data).toEqual([]);
    }
    expect(new Set(endpoint.requests.map((request) => request.headers['x-svc-event-id']))).toEqual(
      new Set([created.id, created2.id, lifecycle3.id]),
    );
  });

  it('retries non-2xx answers (Retry-After ignored) with a growing x-svc-attempt, a fresh timestamp and the same event and body', async () => {
    // A worker of its own whose clock moves 2 s per attempt, so fresh timestamps are visible.
    let offsetMs = 0;
    const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
    const endpoint = receiver.endpoint((_request, index) => {
      offsetMs += 2_000;
      return [{ status: 500 }, { status: 429, headers: { 'retry-after': '3600' } }, { status: 204 }][index] ?? 200;
    });
    const own = createTestWorker(t, receiver, { config: { maxAttempts: 5 }, deps: { clock } });
    extraWorkers.push(own);
    const { tenant, secret } = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);

    const [delivery] = await deliveredNow(t, own, event.id);
    const requests = endpoint.requests;
    expect(requests).toHaveLength(3);
    expect(requests.map((request) => request.headers['x-svc-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(requests.map((request) => request.headers['x-svc-event-id']))).toEqual(new Set([event.id]));
    expect(new Set(requests.map((request) => request.headers['x-svc-delivery-id'])).size).toBe(1);
    expect(new Set(requests.map((request) => request.body.toString('base64'))).size).toBe(1);
    const timestamps = requests.map((request) => Number(request.headers['x-svc-timestamp']));
    expect(timestamps[1]).toBeGreaterThan(timestamps[0]!);
    expect(timestamps[2]).toBeGreaterThan(timestamps[1]!);
    for (const request of requests)
      expect(verifyV1(request.headers, request.body, secret, Math.floor(clock.now().getTime() / 1000))).toMatchObject({
        ok: true,
      });
    expect(delivery).toMatchObject({
      status: 'succeeded',
      attempts: 3,
      attemptLog: [
        { attempt: 1, statusCode: 500, error: 'HTTP 500' },
        { attempt: 2, statusCode: 429, error: 'HTTP 429' },
        { attempt: 3, statusCode: 204, error: null },
      ],
    });
  });

  it('fails the delivery terminally once the attempt budget is spent', async () => {
    const endpoint = receiver.endpoint(() => 503);
    const { tenant } = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, lastError: 'HTTP 503' });
    expect(delivery.attemptLog.map((entry: any) => [entry.attempt, entry.statusCode])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
    ]);
    expect(endpoint.requests.map((request) => request.headers['x-svc-attempt'])).toEqual(['1', '2', '3']);
  });

  it('ends the delivery at once on a redirect, without following it', async () => {
    const elsewhere = receiver.endpoint();
    const endpoint = receiver.endpoint(() => ({ status: 307, headers: { location: elsewhere.url } }));
    const { tenant } = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, attemptLog: [{ attempt: 1, statusCode: 307 }] });
    expect(delivery.lastError).toMatch(/redirect/);
    expect(endpoint.requests).toHaveLength(1);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('times out a receiver that does not answer and retries', async () => {
    // A short timeout, and a budget that leaves room for a slow machine to time out more than once.
    const own = createTestWorker(t, receiver, { config: { timeoutMs: 300, maxAttempts: 6 } });
    extraWorkers.push(own);
    const endpoint = receiver.endpoint((_request, index) => (index === 0 ? 'hang' : 200));
    const { tenant } = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, own, event.id);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attemptLog[0]).toMatchObject({ attempt: 1, statusCode: null, error: 'timed out after 300 ms' });
    expect(delivery.attemptLog.at(-1)).toMatchObject({ statusCode: 200, error: null });
  });

  it('does not queue for an inactive subscription and does not replay missed events on reactivation', async () => {
    const endpoint = receiver.endpoint();
    const { tenant, subscription } = await subscribed(endpoint);
    const off = await t.http.patch(`/api/v1/webhook-subscriptions/${subscription.id}`, {
      token: tenant.token,
      json: { isActive: false },
    });
    expect(off.body.data.isActive).toBe(false);
    const missed = await recordTestEvent(t, tenant.tenantId);
    const on = await t.http.patch(`/api/v1/webhook-subscriptions/${subscription.id}`, {
      token: tenant.token,
      json: { isActive: true },
    });
    expect(on.body.data.isActive).toBe(true);
    const later = await recordTestEvent(t, tenant.tenantId);
    await deliveredNow(t, worker, later.id);
    expect((await admin(t, 'GET', `/admin/v1/deliveries?eventId=${missed.id}`)).body.data).toEqual([]);
    expect(endpoint.requests.map((request) => request.headers['x-svc-event-id'])).toEqual([later.id]);
  });

  it('fails a queued delivery terminally when it is claimed after its subscription was deactivated', async () => {
    const endpoint = receiver.endpoint();
    const { tenant, subscription } = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);
    await t.http.patch(`/api/v1/webhook-subscriptions/${subscription.id}`, {
      token: tenant.token,
      json: { isActive: false },
    });
    const own = createTestWorker(t, receiver);
    extraWorkers.push(own);
    const [delivery] = await deliveredNow(t, own, event.id);
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 1,
      attemptLog: [{ attempt: 1, statusCode: null, error: 'the subscription is inactive' }],
    });
    expect(endpoint.requests).toHaveLength(0);
  });

  it('signs legacy subscriptions with the server key, and after an upgrade and a rotation with the current secret only', async () => {
    const endpoint = receiver.endpoint();
    const tenant = await tenantWithToken(t);
    const legacy = await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`, {
      targetUrl: endpoint.url,
      eventTypes: ['ticket.created'],
    });
    expect(legacy.status).toBe(201);
    expect(legacy.body.data.signingVersion).toBe('legacy');

    const first = await recordTestEvent(t, tenant.tenantId);
    await deliveredNow(t, worker, first.id);
    const [legacyRequest] = endpoint.requests;
    expect(legacyRequest!.headers['x-svc-event-id']).toBe(first.id);
    expect(legacyRequest!.headers['x-svc-signature-alg']).toBe('hmac-sha256');
    expect(legacyRequest!.headers['x-svc-signature-version']).toBeUndefined();
    expect(legacyRequest!.headers['x-svc-timestamp']).toBeUndefined();
    expect(verifyLegacy(legacyRequest!.headers, legacyRequest!.body, t.keys.legacyWebhookKey)).toBe(true);
    expect(verifyV1(legacyRequest!.headers, legacyRequest!.body, 'any secret at all, 16+')).toMatchObject({
      ok: false,
    });

    const upgraded = await t.http.patch(`/api/v1/webhook-subscriptions/${legacy.body.data.id}`, {
      token: tenant.token,
      json: { signingVersion: 'v1', secret: 'first v1 secret, long enough' },
    });
    expect(upgraded.status).toBe(200);
    expect(upgraded.body.data.signingVersion).toBe('v1');
    await deliveredNow(t, worker, (await recordTestEvent(t, tenant.tenantId)).id);
    const [, v1Request] = endpoint.requests;
    expect(verifyV1(v1Request!.headers, v1Request!.body, 'first v1 secret, long enough')).toMatchObject({ ok: true });

    const rotated = await t.http.patch(`/api/v1/webhook-subscriptions/${legacy.body.data.id}`, {
      token: tenant.token,
      json: { secret: 'second v1 secret, long enough' },
    });
    expect(rotated.body.data.signingVersion).toBe('v1');
    await deliveredNow(t, worker, (await recordTestEvent(t, tenant.tenantId)).id);
    const [, , rotatedRequest] = endpoint.requests;
    expect(verifyV1(rotatedRequest!.headers, rotatedRequest!.body, 'second v1 secret, long enough')).toMatchObject({
      ok: true,
    });
    expect(verifyV1(rotatedRequest!.headers, rotatedRequest!.body, 'first v1 secret, long enough')).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
  });

  it("keeps each subscription's health, and deactivates one failing for WEBHOOK_AUTO_DISABLE_AFTER", async () => {
    const healthOf = async (tenantId: string) =>
      (await admin(t, 'GET', `/admin/v1/tenants/${tenantId}/webhook-subscriptions`)).body.data[0];

    const healthy = receiver.endpoint();
    const ok = await subscribed(healthy);
    await deliveredNow(t, worker, (await recordTestEvent(t, ok.tenant.tenantId)).id);
    expect((await healthOf(ok.tenant.tenantId)).health).toMatchObject({
      consecutiveFailures: 0,
      failingSince: null,
      lastError: null,
    });
    expect((await healthOf(ok.tenant.tenantId)).health.lastSuccessAt).not.toBeNull();

    // The worker's clock moves 1 s per attempt received, so attempt 2 certainly outlasts the 1 ms setting.
    let offsetMs = 0;
    const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
    const own = createTestWorker(t, receiver, { config: { autoDisableAfterMs: 1 }, deps: { clock } });
    extraWorkers.push(own);
    const failing = receiver.endpoint(() => {
      offsetMs += 1_000;
      return 500;
    });
    const { tenant } = await subscribed(failing);
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, own, event.id);
    // Attempt 1 starts the failure streak, attempt 2 outlasts the setting and deactivates, attempt 3 finds it inactive.
    expect(delivery.attemptLog.map((entry: any) => entry.error)).toEqual([
      'HTTP 500',
      'HTTP 500',
      'the subscription is inactive',
    ]);
    expect(failing.requests).toHaveLength(2);
    const subscription = await healthOf(tenant.tenantId);
    expect(subscription.isActive).toBe(false);
    expect(subscription.health).toMatchObject({ consecutiveFailures: 2, lastError: 'HTTP 500' });
    expect(subscription.health.deactivatedReason).toMatch(/WEBHOOK_AUTO_DISABLE_AFTER/);
    expect((await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token })).body.data[0].isActive).toBe(
      false,
    );

    const reactivated = await t.http.patch(`/api/v1/webhook-subscriptions/${subscription.id}`, {
      token: tenant.token,
      json: { isActive: true },
    });
    expect(reactivated.body.data.isActive).toBe(true);
    expect((await healthOf(tenant.tenantId)).health).toMatchObject({
      consecutiveFailures: 0,
      failingSince: null,
      deactivatedReason: null,
    });
  });

  it('lets the operator retry a terminally failed delivery: a fresh budget, the same event id, attempts keep counting', async () => {
    const endpoint = receiver.endpoint(() => 500);
    const { tenant, secret } = await subscribed(endpoint);
    const event = await recordTestEvent(t, tenant.tenantId);
    const [failed] = await deliveredNow(t, worker, event.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 3 });

    endpoint.respond((_request, index) => (index < 4 ? 500 : 200));
    const retried = await admin(t, 'POST', `/admin/v1/deliveries/${failed.deliveryId}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body.data).toMatchObject({ deliveryId: failed.deliveryId, status: 'pending', attempts: 3 });

    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 5 });
    expect(delivery.attemptLog.map((entry: any) => entry.attempt)).toEqual([1, 2, 3, 4, 5]);
    const requests = endpoint.requests;
    expect(requests.map((request) => request.headers['x-svc-attempt'])).toEqual(['1', '2', '3', '4', '5']);
    expect(new Set(requests.map((request) => request.headers['x-svc-event-id']))).toEqual(new Set([event.id]));
    expect(verifyV1(requests[4]!.headers, requests[4]!.body, secret)).toMatchObject({ ok: true });

    const again = await admin(t, 'POST', `/admin/v1/deliveries/${failed.deliveryId}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.type).toMatch(/invalid-state$/);
  });
});
