/**
 * A listener's stream holds at most MAX_UNREAD_BYTES sent and not read by its client (and one attempt). A client
 * that stops reading is cut when it misses a ping, but until then every attempt sent to it piled up in the server's
 * memory behind its socket, with nothing to bound it. Past the bound the attempts for the stream are held back (ids
 * only) and sent as the client reads; a stream cut with attempts held reports them as closed, and the next stream
 * gets every delivery: nothing is lost.
 *
 * The client here is `ws` with its socket paused from its `ready` on (it reads nothing, so it answers no ping
 * either). The deliveries are there before it: their first attempt failed "not connected", and its stream makes them
 * all due the moment it attaches, to a worker with a slot for each, so that the attempts sent at once are several
 * times the bound and the socket buffers (which fill first), well before the missed ping cuts the stream. Retries are
 * a minute away: a delivery that arrives on a stream was made due by that stream, not by the schedule.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { MAX_UNREAD_BYTES } from '../../src/modules/webhook-listeners/stream.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createListener, openStream, streamHeld } from '../helpers/listener-stream.js';
import { type CapturedLog, capturedLog } from '../helpers/log-lines.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  localResolver,
  recordTestEvent,
  startTestWorker,
  TestReceiver,
  testWebhookConfig,
  waitForDeliveries,
} from '../helpers/webhooks.js';

/** Each event's size: the deliveries claimed together are several times the bound and the socket buffers. */
const EVENT_BYTES = 256 * 1024;
const EVENTS = 48;

let receiver: TestReceiver;
let t: TestApp;
let log: CapturedLog;
let worker: DeliveryWorker | undefined;

beforeAll(async () => {
  receiver = await TestReceiver.start();
  log = capturedLog('info');
  // The attempt timeout is long: the burst on the reading stream (12 MB, loaded, signed and read) must not outlast
  // it on a loaded machine, or an attempt would wait for the retry a minute away.
  const webhook = testWebhookConfig(receiver.port, {
    concurrency: EVENTS,
    retryScheduleMs: [60_000],
    maxAttempts: 5,
    timeoutMs: 30_000,
    leaseMs: 60_000,
  });
  t = await startTestApp({ resolver: localResolver, logger: log.logger, config: { webhook } });
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await receiver?.close();
});

/** Whether the server still holds the listener's stream. */
const held = (listenerId: string) => streamHeld(t, listenerId);

it('sends a client that stops reading no more than the bound; the next stream gets every delivery', async () => {
  const tenant = await tenantWithToken(t, { webhookAccess: true });
  const listener = await createListener(t.http, tenant.token, ['ticket.created']);
  worker = await startTestWorker(t, receiver);
  const events = [];
  for (let index = 0; index < EVENTS; index++)
    events.push(await recordTestEvent(t, tenant.tenantId, 'ticket.created', { note: 'x'.repeat(EVENT_BYTES) }));
  for (const event of events)
    await waitForDeliveries(t, event.id, (all) => all.length === 1 && all[0].attemptLog.length === 1);

  const url = `${t.baseUrl.replace(/^http/, 'ws')}${listener.streamPath}`;
  const deaf = new WebSocket(url, { headers: { authorization: `Bearer ${tenant.token}` } });
  const received: Array<{ type: string }> = [];
  let reading = false;
  deaf.on('message', (data) => {
    received.push(JSON.parse(String(data)));
    // From its `ready` on, it reads nothing (ws may still hand over what it had read).
    if (!reading) deaf.pause();
  });
  const closed = new Promise<number>((resolve) => deaf.on('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => deaf.once('message', resolve).once('error', reject));
  expect(received[0]).toMatchObject({ type: 'ready' });

  // Sending stopped at the bound: what waited in the server's memory then was the bound and one attempt at most.
  const backedUp = await log.waitFor(
    (line) => line.msg?.startsWith('webhook listener stream backed up') && line.listenerId === listener.id,
  );
  expect(backedUp.unreadBytes).toBeGreaterThanOrEqual(MAX_UNREAD_BYTES);
  expect(backedUp.unreadBytes).toBeLessThan(MAX_UNREAD_BYTES + 2 * EVENT_BYTES);
  // It answers no ping: the server cuts it (its grace starts), and it got a part of what was claimed for it.
  while (await held(listener.id)) await new Promise((resolve) => setTimeout(resolve, 20));
  reading = true;
  deaf.resume();
  expect(await closed).toBe(1006);
  expect(received.filter((message) => message.type === 'attempt').length).toBeLessThan(EVENTS);

  // A client that reads gets every delivery at once (the retries are a minute away), the burst held back at the
  // bound and sent as it reads, and each succeeds.
  const stream = await openStream(t.baseUrl, listener.streamPath, tenant.token);
  expect((await stream.next()).type).toBe('ready');
  const answered = new Set<string>();
  while (answered.size < EVENTS) {
    const attempt = await stream.next(30_000);
    stream.report(attempt, 204);
    answered.add(attempt.eventId);
  }
  for (const event of events)
    await waitForDeliveries(t, event.id, (all) => all.length === 1 && all[0].status === 'succeeded');
  await stream.close();
});
