/**
 * The sandbox's webhook listeners (issue 18), in process: a listener's stream receives its tenant's
 * events exactly as a real v1 delivery of the attempt (verified with its own secret), each attempt's
 * reported outcome is recorded like any delivery's (a 500 gets attempt 2), a dropped stream resumes
 * within the grace (an attempt it dropped unreported is sent again on the next stream) and the listener closes after it (pending deliveries fail "listener closed"), another
 * tenant's events never arrive, at most 5 are open per tenant, the stream's openings are limited apart from the requests, and
 * production has no trace of any of it; a listener created with a `secret` signs with it. The grace runs on an injected clock.
 * The same through real processes (svc listen, the example receiver): tests/client/listen.test.ts.
 */
import { verifyWebhook } from '@site-services/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createListener, openStream, type StreamMessage } from '../helpers/listener-stream.js';
import { expectProblem } from '../helpers/problems.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';
import {
  localResolver,
  recordTestEvent,
  startTestWorker,
  testWebhookConfig,
  TestReceiver,
  verifyV1,
  waitForDeliveries,
} from '../helpers/webhooks.js';

const GRACE_MS = 600_000;
const clock = new ManualClock();
let receiver: TestReceiver;
let t: TestApp;
/** The test's worker: it serves the whole database, so each test starts one and it stops with the test. */
let worker: DeliveryWorker | undefined;

beforeAll(async () => {
  receiver = await TestReceiver.start();
  t = await startTestApp({
    clock,
    resolver: localResolver,
    config: { webhook: testWebhookConfig(receiver.port, { listenerGraceMs: GRACE_MS }) },
  });
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

/**
 * A tenant with webhook access, served by a worker that retries at once (20 ms) or, `slow`, after a minute
 * (its deliveries wait while a stream is away).
 */
async function tenant(retries: 'fast' | 'slow' = 'fast') {
  worker ??= await startTestWorker(t, receiver, retries === 'slow' ? { config: { retryScheduleMs: [60_000] } } : {});
  return tenantWithToken(t, { webhookAccess: true });
}

/** Until the server has seen the stream drop (the listener has no stream: its grace runs). */
async function dropped(listenerId: string) {
  for (;;) {
    const row = await t.database.db
      .selectFrom('webhook_listeners')
      .select('stream_id')
      .where('id', '=', listenerId)
      .executeTakeFirstOrThrow();
    if (row.stream_id === null) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function deliveryOf(eventId: string, done: (delivery: any) => boolean) {
  const [delivery] = await waitForDeliveries(t, eventId, (all) => all.length === 1 && done(all[0]));
  return delivery;
}

function createListenerWith(token: string, json: Record<string, unknown>) {
  return t.http.post('/api/v1/sandbox/webhook-listeners', { token, json });
}

/** The next attempt on the stream, checked as a receiver would check a real delivery. */
async function nextAttempt(stream: { next(): Promise<StreamMessage> }, secret: string) {
  const attempt = await stream.next();
  expect(attempt.type).toBe('attempt');
  const body = Buffer.from(attempt.body, 'utf8');
  const verification = verifyV1(attempt.headers, body, secret);
  expect(verification, JSON.stringify(verification)).toMatchObject({ ok: true });
  expect(attempt.headers).toMatchObject({
    'content-type': 'application/json',
    'x-svc-event-id': attempt.eventId,
    'x-svc-event-type': attempt.eventType,
    'x-svc-delivery-id': attempt.deliveryId,
    'x-svc-attempt': String(attempt.attempt),
  });
  return attempt;
}

/**
 * A listener of a `slow` tenant whose stream connected once and dropped, and an event recorded since:
 * its delivery's first attempt failed (no stream) and waits for its retry, a minute away.
 */
async function eventWhileStreamAway() {
  const b = await tenant('slow');
  const listener = await createListener(t.http, b.token);
  const stream = await openStream(t.baseUrl, listener.streamPath, b.token);
  await stream.next();
  await stream.close();
  await dropped(listener.id);
  const event = await recordTestEvent(t, b.tenantId, 'ticket.created');
  const waiting = await deliveryOf(event.id, (d) => d.attemptLog.length === 1 && d.status === 'pending');
  return { b, listener, event, waiting };
}

describe('a sandbox webhook listener', () => {
  it("streams its tenant's events as real deliveries and records each reported outcome; a 500 gets attempt 2", async () => {
    const a = await tenant();
    const listener = await createListener(t.http, a.token, ['ticket.created']);
    expect(listener.id).toMatch(/^whl_/);
    expect(listener.streamPath).toBe(`/api/v1/sandbox/webhook-listeners/${listener.id}/stream`);
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    expect(await stream.next()).toMatchObject({ type: 'ready', listenerId: listener.id, graceMs: GRACE_MS });

    const event = await recordTestEvent(t, a.tenantId, 'ticket.created');
    const first = await nextAttempt(stream, listener.secret);
    expect(first).toMatchObject({ eventId: event.id, eventType: 'ticket.created', attempt: 1 });
    expect(JSON.parse(first.body)).toMatchObject({ id: event.id, type: 'ticket.created' });
    stream.report(first, 500, 7);
    const second = await nextAttempt(stream, listener.secret);
    expect(second).toMatchObject({ eventId: event.id, deliveryId: first.deliveryId, attempt: 2 });
    expect(second.body).toBe(first.body);
    stream.report(second, 204);

    const delivery = await deliveryOf(event.id, (d) => d.status === 'succeeded');
    expect(delivery).toMatchObject({ subscriptionId: listener.id, targetKind: 'listener', tenantId: a.tenantId });
    expect(delivery.attemptLog.map((entry: any) => [entry.attempt, entry.statusCode, entry.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 204, null],
    ]);

    // Not a subscription: neither listed nor patchable.
    const subscriptions = await t.http.get('/api/v1/webhook-subscriptions', { token: a.token });
    expect(subscriptions.body.data).toEqual([]);
    const patch = await t.http.patch(`/api/v1/webhook-subscriptions/${listener.id}`, {
      token: a.token,
      json: { isActive: false },
    });
    expectProblem(patch, 404, 'not-found');
    await stream.close();
  });

  it('signs with the secret given at its creation (svc listen gives the same at every start), else with a new one', async () => {
    const a = await tenant();
    const secret = 'whsec_my-own-receiver-secret';
    const opened = await t.http.post('/api/v1/sandbox/webhook-listeners', {
      token: a.token,
      json: { eventTypes: ['ticket.created'], secret },
    });
    expect(opened.status, opened.text).toBe(201);
    const listener = opened.body.data;
    expect(listener.secret).toBe(secret);
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    await stream.next();
    const event = await recordTestEvent(t, a.tenantId, 'ticket.created');
    const attempt = await nextAttempt(stream, secret);
    // As the client package's receiver checks it.
    const verified = verifyWebhook({ headers: attempt.headers, rawBody: Buffer.from(attempt.body, 'utf8'), secret });
    expect(verified).toMatchObject({ id: event.id, type: 'ticket.created' });
    stream.report(attempt, 204);
    await deliveryOf(event.id, (d) => d.status === 'succeeded');
    await stream.close();

    // Another listener may be given the same secret; one created without gets a new one of its own.
    const again = await createListenerWith(a.token, { secret });
    expect(again.status, again.text).toBe(201);
    expect(again.body.data.secret).toBe(secret);
    const made = await createListener(t.http, a.token);
    expect(made.secret).toMatch(/^whsec_/);
    expect(made.secret).not.toBe(secret);

    // The constraints of a subscription's secret: at least 16 Unicode code points, a string.
    const short = expectProblem(await createListenerWith(a.token, { secret: 'x'.repeat(15) }), 422, 'validation-error');
    expect(short.secret?.join(' ')).toMatch(/at least 16/);
    const units = await createListenerWith(a.token, { secret: `${'x'.repeat(14)}🔑` });
    expect(expectProblem(units, 422, 'validation-error').secret?.join(' ')).toMatch(/at least 16/);
    expectProblem(await createListenerWith(a.token, { secret: 'x'.repeat(513) }), 422, 'validation-error', ['secret']);
    expectProblem(await createListenerWith(a.token, { secret: null }), 422, 'validation-error', ['secret']);
  });

  it("never sees another tenant's events, nor event types outside its filter", async () => {
    const a = await tenant();
    const other = await tenant();
    const listener = await createListener(t.http, a.token, ['job.dispatched']);
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    await stream.next();
    await recordTestEvent(t, other.tenantId, 'job.dispatched');
    await recordTestEvent(t, a.tenantId, 'ticket.created');
    const mine = await recordTestEvent(t, a.tenantId, 'job.dispatched');
    const attempt = await nextAttempt(stream, listener.secret);
    expect(attempt.eventId).toBe(mine.id);
    stream.report(attempt, 200);
    await deliveryOf(mine.id, (d) => d.status === 'succeeded');
    expect(stream.pending()).toEqual([]);
    // Nor may it open another tenant's listener.
    await expect(openStream(t.baseUrl, listener.streamPath, other.token)).rejects.toThrow(/refused/);
    await stream.close();
  });

  it("says in each attempt what follows a failure: a retry after the schedule's wait, or none on the last attempt", async () => {
    const a = await tenant();
    const listener = await createListener(t.http, a.token, ['ticket.created']);
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    await stream.next();
    const event = await recordTestEvent(t, a.tenantId, 'ticket.created');
    const { maxAttempts, retryScheduleMs } = t.config.webhook;
    expect(maxAttempts).toBe(3);
    for (const number of [1, 2]) {
      const attempt = await nextAttempt(stream, listener.secret);
      expect(attempt).toMatchObject({ attempt: number, lastAttempt: false, retryInMs: retryScheduleMs[0] });
      stream.report(attempt, 503);
    }
    const last = await nextAttempt(stream, listener.secret);
    expect(last).toMatchObject({ eventId: event.id, attempt: 3, lastAttempt: true, retryInMs: null });
    stream.report(last, 503);
    const delivery = await deliveryOf(event.id, (d) => d.status === 'failed');
    expect(delivery.attempts).toBe(3);
    await stream.close();
  });

  it('resumes within the grace: a delivery waiting for its retry is sent as soon as the stream is back', async () => {
    const { b, listener, event, waiting } = await eventWhileStreamAway();
    expect(waiting.attemptLog[0].error).toMatch(/listener not connected/);

    const resumed = await openStream(t.baseUrl, listener.streamPath, b.token);
    expect((await resumed.next()).type).toBe('ready');
    const attempt = await nextAttempt(resumed, listener.secret);
    expect(attempt).toMatchObject({ eventId: event.id, attempt: 2 });
    resumed.report(attempt, 200);
    await deliveryOf(event.id, (d) => d.status === 'succeeded');
    await resumed.close();
  });

  it('loses nothing to a stream that drops mid-delivery: the attempt sent is failed and sent again on the next stream', async () => {
    const b = await tenant('slow');
    const listener = await createListener(t.http, b.token);
    const stream = await openStream(t.baseUrl, listener.streamPath, b.token);
    await stream.next();
    const event = await recordTestEvent(t, b.tenantId, 'ticket.created');
    const sent = await nextAttempt(stream, listener.secret);
    // Gone with the attempt in hand, before reporting it.
    await stream.close();
    const waiting = await deliveryOf(event.id, (d) => d.attemptLog.length === 1 && d.status === 'pending');
    expect(waiting.attemptLog[0].error).toMatch(/closed before reporting/);

    // Its retry is a minute away; the next stream gets it at once.
    const resumed = await openStream(t.baseUrl, listener.streamPath, b.token);
    expect((await resumed.next()).type).toBe('ready');
    const again = await nextAttempt(resumed, listener.secret);
    expect(again).toMatchObject({ eventId: event.id, deliveryId: sent.deliveryId, attempt: 2 });
    resumed.report(again, 200);
    await deliveryOf(event.id, (d) => d.status === 'succeeded');
    await resumed.close();
  });

  it('closes after the grace: its pending deliveries fail "listener closed" and its stream cannot reopen', async () => {
    const { b, listener, event } = await eventWhileStreamAway();

    clock.advance(GRACE_MS + 1_000);
    const failed = await deliveryOf(event.id, (d) => d.status === 'failed');
    expect(failed.lastError).toBe('listener closed');
    await expect(openStream(t.baseUrl, listener.streamPath, b.token)).rejects.toThrow(/refused/);
    // A closed listener receives nothing more.
    const later = await recordTestEvent(t, b.tenantId, 'ticket.created');
    const none = await admin(t, 'GET', `/admin/v1/deliveries?eventId=${later.id}`);
    expect(none.body.data).toEqual([]);
  });

  it('ends its stream with 4410 when closed (DELETE), failing what was pending', async () => {
    const a = await tenant();
    const listener = await createListener(t.http, a.token);
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    await stream.next();
    const deleted = await t.http.delete(`/api/v1/sandbox/webhook-listeners/${listener.id}`, { token: a.token });
    expect(deleted.status).toBe(204);
    expect((await stream.closed).code).toBe(4410);
    const again = await t.http.delete(`/api/v1/sandbox/webhook-listeners/${listener.id}`, { token: a.token });
    expect(again.status).toBe(204);
    const unknown = await t.http.delete('/api/v1/sandbox/webhook-listeners/whl_unknown', { token: a.token });
    expectProblem(unknown, 404, 'not-found');
  });

  it('ends its stream (4401) once the credentials that opened it are revoked or lose webhooks:write', async () => {
    const a = await tenant();
    const listener = await createListener(t.http, a.token);
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    await stream.next();
    const revoked = await admin(t, 'DELETE', `/admin/v1/tenants/${a.tenantId}/credentials/${a.clientId}`);
    expect(revoked.status).toBe(204);
    expect(await stream.closed).toMatchObject({ code: 4401 });
    // Its tenant's events no longer reach a client that lost its credentials.
    const event = await recordTestEvent(t, a.tenantId, 'ticket.created');
    const waiting = await deliveryOf(event.id, (d) => d.attemptLog.length >= 1);
    expect(waiting.attemptLog[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/listener|stream/) });
    expect(stream.pending()).toEqual([]);

    const b = await tenant();
    const other = await createListener(t.http, b.token);
    const narrowed = await openStream(t.baseUrl, other.streamPath, b.token);
    await narrowed.next();
    const patched = await admin(t, 'PATCH', `/admin/v1/tenants/${b.tenantId}`, { scopes: ['webhooks:read'] });
    expect(patched.status).toBe(200);
    expect(await narrowed.closed).toMatchObject({ code: 4401 });
  });

  it('answers a plain HTTP request for its stream 426 upgrade-required as a problem, naming the WebSocket upgrade', async () => {
    const a = await tenant();
    const listener = await createListener(t.http, a.token);
    const plain = await t.http.get(listener.streamPath, { token: a.token });
    expectProblem(plain, 426, 'upgrade-required');
    expect(plain.headers.get('upgrade')).toBe('websocket');
    const head = await t.http.request('HEAD', listener.streamPath, { token: a.token });
    expect(head.status).toBe(426);
    expect(head.headers.get('upgrade')).toBe('websocket');
    // The stream itself still opens.
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    expect((await stream.next()).type).toBe('ready');
    await stream.close();
  });

  it('is capped at 5 open listeners per tenant, and needs webhook access and webhooks:write', async () => {
    const a = await tenant();
    for (let index = 0; index < 5; index++) await createListener(t.http, a.token);
    const sixth = await t.http.post('/api/v1/sandbox/webhook-listeners', { token: a.token, json: {} });
    expectProblem(sixth, 422, 'listener-limit-reached');

    const noAccess = await tenantWithToken(t, { webhookAccess: false });
    const refused = await t.http.post('/api/v1/sandbox/webhook-listeners', { token: noAccess.token, json: {} });
    expectProblem(refused, 403, 'forbidden');
    const readOnly = await tenantWithToken(t, { webhookAccess: true, scope: 'webhooks:read' });
    const scoped = await t.http.post('/api/v1/sandbox/webhook-listeners', { token: readOnly.token, json: {} });
    expectProblem(scoped, 403, 'forbidden');
  });
});

describe('the listener stream and the rate limit', () => {
  it('openings of the stream are counted in a window of their own, with the same limit', async () => {
    const limited = await startTestApp({ config: { rateLimitPerMinute: 3 } });
    try {
      const a = await tenantWithToken(limited, { webhookAccess: true });
      const listener = await createListener(limited.http, a.token);
      for (let index = 0; index < 3; index++) {
        const stream = await openStream(limited.baseUrl, listener.streamPath, a.token);
        await stream.close();
      }
      // The token and the create were two requests: one more is allowed, then 429.
      expect((await limited.http.get('/api/v1/webhook-subscriptions', { token: a.token })).status).toBe(200);
      expect((await limited.http.get('/api/v1/webhook-subscriptions', { token: a.token })).status).toBe(429);
      // Uncounted, an address opened and dropped streams without end (hostile-tenant probe).
      await expect(openStream(limited.baseUrl, listener.streamPath, a.token)).rejects.toThrow(/refused/);
    } finally {
      await limited.close();
    }
  });
});

describe('the listener stream and the rate limit: refusals', () => {
  it('a refused stream request is counted, and refused 429 past the limit; a stream that opens still opens', async () => {
    const limited = await startTestApp({ config: { rateLimitPerMinute: 3 } });
    try {
      // Two counted requests: the token and the create.
      const a = await tenantWithToken(limited, { webhookAccess: true });
      const listener = await createListener(limited.http, a.token);
      const unknown = '/api/v1/sandbox/webhook-listeners/whl_unknown/stream';
      expectProblem(await limited.http.get(unknown), 401, 'unauthorized');
      const refused = await limited.http.get(unknown, { token: a.token });
      expectProblem(refused, 429, 'rate-limit-exceeded');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expectProblem(await limited.http.get(listener.streamPath, { token: a.token }), 429, 'rate-limit-exceeded');
      expect((await limited.http.get('/api/v1/webhook-subscriptions', { token: a.token })).status).toBe(429);
      // The address is over its limit, yet the listener's stream is not starved by it.
      const stream = await openStream(limited.baseUrl, listener.streamPath, a.token);
      expect((await stream.next()).type).toBe('ready');
      await stream.close();
    } finally {
      await limited.close();
    }
  });
});

describe('production', () => {
  it('answers 404 and its document has no trace of listeners', async () => {
    const production = await startTestApp({ config: { environment: 'production' } });
    try {
      const a = await tenantWithToken(production, { webhookAccess: true });
      const created = await production.http.post('/api/v1/sandbox/webhook-listeners', { token: a.token, json: {} });
      expectProblem(created, 404, 'not-found');
      await expect(
        openStream(production.baseUrl, '/api/v1/sandbox/webhook-listeners/whl_x/stream', a.token),
      ).rejects.toThrow(/refused/);
      const document = await production.http.get('/api/v1/openapi.json');
      expect(document.text).not.toMatch(/listener/i);
      const page = await production.http.get('/problems/listener-limit-reached');
      expect(page.status).toBe(404);
    } finally {
      await production.close();
    }
  });
});
