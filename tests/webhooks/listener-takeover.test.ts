/**
 * A newer stream takes a listener over (svc listen reconnects before the server saw its old stream drop, or a
 * second svc listen opens the same listener). The attempts already sent on the old stream and not yet reported
 * were left to their workers' timeout: recorded "timed out after 30000 ms" and retried on the schedule, not on
 * the new stream. A takeover now ends them as a drop does: "closed before reporting", at once, and the new
 * stream gets the delivery's next attempt at once. In one process the old stream ends when the new one attaches;
 * a stream held by another process ends at that process's next tick (its renewal finds the listener taken).
 * Nothing sleeps: the old stream holds its attempt unanswered until the takeover, and the retries are a minute
 * away, so only the takeover's outcome and the new stream's resumption can send the delivery again in time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createListener, openStream } from '../helpers/listener-stream.js';
import { type CapturedLog, capturedLog } from '../helpers/log-lines.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  localResolver,
  recordTestEvent,
  secondDatabaseHandle,
  startTestWorker,
  testWebhookConfig,
  TestReceiver,
  waitForDeliveries,
} from '../helpers/webhooks.js';

const REPLACED = 4409;
let receiver: TestReceiver;
let t: TestApp;
/** A second API process on the same database (its own hub). */
let other: TestApp;
let otherDatabase: ReturnType<typeof secondDatabaseHandle>;
let worker: DeliveryWorker;
/** The first process's log: which of its paths ended the old stream. */
let log: CapturedLog;

beforeAll(async () => {
  receiver = await TestReceiver.start();
  // An attempt timeout far past a notification's round trip on a loaded machine: an attempt left to it is
  // recorded "timed out after 30000 ms".
  const config = { webhook: testWebhookConfig(receiver.port, { timeoutMs: 30_000, leaseMs: 60_000 }) };
  log = capturedLog('info');
  t = await startTestApp({ resolver: localResolver, config, logger: log.logger });
  otherDatabase = secondDatabaseHandle(t);
  other = await startTestApp({ resolver: localResolver, config, database: otherDatabase.database, keys: t.keys });
  worker = await startTestWorker(t, receiver, { config: { retryScheduleMs: [60_000] } });
});
afterAll(async () => {
  await worker?.stop();
  await other?.close();
  await otherDatabase?.close();
  await t?.close();
  await receiver?.close();
});

/**
 * A listener whose stream on `t` has been sent an event's first attempt and has not answered it, taken over by a
 * stream opened on `app`: the old stream's attempt is told closed at once, and the new stream gets the next
 * attempt, each once. Answers the first process's log line for the old stream's end, and the new stream's id.
 */
async function takeOverOn(app: TestApp) {
  const a = await tenantWithToken(t, { webhookAccess: true });
  const listener = await createListener(t.http, a.token, ['ticket.created']);
  const old = await openStream(t.baseUrl, listener.streamPath, a.token);
  expect((await old.next()).type).toBe('ready');
  const event = await recordTestEvent(t, a.tenantId, 'ticket.created');
  const sent = await old.next();
  expect(sent).toMatchObject({ type: 'attempt', eventId: event.id, attempt: 1 });

  const taker = await openStream(app.baseUrl, listener.streamPath, a.token);
  expect((await taker.next()).type).toBe('ready');
  const { stream_id: takerId } = await t.database.db
    .selectFrom('webhook_listeners')
    .select('stream_id')
    .where('id', '=', listener.id)
    .executeTakeFirstOrThrow();
  expect(await old.closed).toMatchObject({ code: REPLACED });
  const [waiting] = await waitForDeliveries(t, event.id, ([d]) => d?.attemptLog.length === 1);
  expect(waiting.attemptLog[0]).toMatchObject({ attempt: 1, statusCode: null });
  expect(waiting.attemptLog[0].error).toMatch(/closed before reporting/);

  const again = await taker.next();
  expect(again).toMatchObject({ type: 'attempt', eventId: event.id, deliveryId: sent.deliveryId, attempt: 2 });
  taker.report(again, 200);
  const [done] = await waitForDeliveries(t, event.id, ([d]) => d?.status === 'succeeded');
  expect(done.attempts).toBe(2);
  expect(done.attemptLog.map((entry: { attempt: number }) => entry.attempt)).toEqual([1, 2]);
  // Once each: attempt 1 on the old stream (unanswered when it ended), attempt 2 on the new one.
  expect(old.pending()).toEqual([]);
  expect(taker.pending()).toEqual([]);
  await taker.close();
  const ended = log.lines.find(
    (line) => line.msg === 'webhook listener stream taken over' && line.listenerId === listener.id,
  );
  expect(ended).toBeDefined();
  return { ended: ended!, takerId };
}

describe('a stream taking over a listener with an attempt in flight on the old one', () => {
  it('in the same process: the old stream ends as the new one attaches; its attempt is closed and sent again at once', async () => {
    const { ended, takerId } = await takeOverOn(t);
    // Ended by the attach, which names the stream that took over (a tick knows only that another one did).
    expect(ended.takenOverBy).toBe(takerId);
  });

  it("in another process: the old holder's tick ends its stream and closes its attempt; sent again at once", async () => {
    const { ended } = await takeOverOn(other);
    expect(ended.takenOverBy).toBeUndefined();
  });
});
