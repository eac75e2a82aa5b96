/**
 * What `svc listen` reports about a forwarding failure is text the tenant's own process chooses. A NUL in
 * it (which PostgreSQL's text cannot hold) failed the outcome's write: the attempt stayed claimed until its
 * lease ran out and was logged as "the worker's lease expired" instead of what the client reported; so did
 * an unpaired surrogate, which the attempt log's jsonb refuses. Line breaks are recorded as spaces, other
 * control characters and unpaired surrogates as U+FFFD; the rest of the text as sent. An attempt is forgotten
 * by its stream once the attempt timeout has passed (hostile-tenant probe: one never reported was kept for as
 * long as the stream lived), so a later report reaches no worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForNotifications } from '../../src/db/notifications.js';
import { ManualClock } from '../../src/lib/clock.js';
import { REPORT_CHANNEL } from '../../src/modules/webhook-listeners/protocol.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createListener, openStream } from '../helpers/listener-stream.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  localResolver,
  recordTestEvent,
  startTestWorker,
  testWebhookConfig,
  TestReceiver,
  waitForDeliveries,
} from '../helpers/webhooks.js';

const clock = new ManualClock();
let receiver: TestReceiver;
let t: TestApp;
let worker: DeliveryWorker;

beforeAll(async () => {
  receiver = await TestReceiver.start();
  t = await startTestApp({
    clock,
    resolver: localResolver,
    config: { webhook: testWebhookConfig(receiver.port) },
  });
  worker = await startTestWorker(t, receiver);
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await receiver?.close();
});

/** A tenant's listener with its stream open, and the first attempt of a ticket.created event on it. */
async function firstAttempt() {
  const a = await tenantWithToken(t, { webhookAccess: true });
  const listener = await createListener(t.http, a.token, ['ticket.created']);
  const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
  await stream.next();
  const event = await recordTestEvent(t, a.tenantId, 'ticket.created');
  return { stream, event, first: await stream.next() };
}

describe("a listener's report of a forwarding failure", () => {
  it("is recorded as the attempt's error, control characters replaced, and the delivery retried at once", async () => {
    const { stream, event, first } = await firstAttempt();
    stream.send({
      type: 'result',
      deliveryId: first.deliveryId,
      attempt: first.attempt,
      error: 'ECONNREFUSED\u0000 at\u0007 localhost:8080\n\u202E',
      durationMs: 4,
    });
    // The retry schedule's 20 ms, not the 60 s lease.
    const second = await stream.next(5_000);
    expect(second).toMatchObject({ deliveryId: first.deliveryId, attempt: 2 });
    stream.report(second, 204);
    const [delivery] = await waitForDeliveries(t, event.id, (all) => all[0]?.status === 'succeeded');
    expect(delivery.attemptLog.map((entry: any) => [entry.attempt, entry.statusCode, entry.error])).toEqual([
      [1, null, 'forwarding failed: ECONNREFUSED\uFFFD at\uFFFD localhost:8080 \u202E'],
      [2, 204, null],
    ]);
    await stream.close();
  });

  it('records an unpaired surrogate as U+FFFD, also one left by cutting the text at its longest', async () => {
    const { stream, event, first } = await firstAttempt();
    stream.send({ type: 'result', deliveryId: first.deliveryId, attempt: first.attempt, error: 'lone \udc00 here' });
    const second = await stream.next(5_000);
    expect(second).toMatchObject({ deliveryId: first.deliveryId, attempt: 2 });
    // The text is cut at 300 code units, between the two halves of the emoji.
    stream.send({ type: 'result', deliveryId: second.deliveryId, attempt: 2, error: `${'x'.repeat(299)}\u{1F600}` });
    const third = await stream.next(5_000);
    expect(third).toMatchObject({ deliveryId: first.deliveryId, attempt: 3 });
    stream.report(third, 204);
    const [delivery] = await waitForDeliveries(t, event.id, (all) => all[0]?.status === 'succeeded');
    expect(delivery.attemptLog.map((entry: any) => [entry.attempt, entry.error])).toEqual([
      [1, 'forwarding failed: lone \uFFFD here'],
      [2, `forwarding failed: ${'x'.repeat(299)}\uFFFD`],
      [3, null],
    ]);
    await stream.close();
  });
});

describe('an attempt never reported', () => {
  it('is forgotten by its stream after the attempt timeout: a later report is not relayed', async () => {
    const { stream, first } = await firstAttempt();
    const relayed: string[] = [];
    // Without a payload: the listener's own (re)connection (PostgreSQL), not a report.
    const reports = await listenForNotifications(
      t.database,
      REPORT_CHANNEL,
      (payload) => payload && relayed.push(payload),
      t.logger,
    );
    try {
      // The stream holder's clock past the attempt timeout, then one of its ticks (at most a second).
      clock.advance(t.config.webhook.timeoutMs + 1);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      stream.report(first, 200);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(relayed).toEqual([]);
    } finally {
      await reports.close();
      await stream.close();
    }
  });
});
