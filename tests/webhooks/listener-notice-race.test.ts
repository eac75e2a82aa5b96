/**
 * A delivery worker reads a listener's stream id, then notifies that stream's holder. A worker that read the
 * id just before the stream dropped, and notified after, had its notice ignored (the holder no longer had the
 * stream): it waited for its attempt timeout, and the attempt, recorded as timed out, was retried on the
 * schedule, not as soon as a stream held the listener again. The holder now answers a notice naming a stream
 * it dropped as the worker itself answers finding no stream: "listener not connected", at once, and the next
 * stream gets the delivery at once. The window is held open deterministically: the relay's read of the
 * listener's row is paused (a Kysely plugin on the relay's own handle) until the server has seen the drop.
 */
import type { KyselyPlugin, QueryResult, UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { ListenerRelay } from '../../src/modules/webhook-listeners/relay.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createListener, openStream, streamHeld } from '../helpers/listener-stream.js';
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
const pause = listenerReadPause();

beforeAll(async () => {
  receiver = await TestReceiver.start();
  // An attempt timeout far past a notification's round trip on a loaded machine: an ignored notice is an
  // attempt timed out after it.
  t = await startTestApp({
    clock,
    resolver: localResolver,
    config: { webhook: testWebhookConfig(receiver.port, { timeoutMs: 30_000, leaseMs: 60_000 }) },
  });
  const relay = new ListenerRelay({
    database: { ...t.database, db: t.database.db.withPlugin(pause) },
    clock,
    logger: t.logger,
  });
  // Retries a minute away: only the next stream's resumption sends the delivery again at once.
  worker = await startTestWorker(t, receiver, { config: { retryScheduleMs: [60_000] }, deps: { listeners: relay } });
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await receiver?.close();
});

describe("a worker's notice to a stream that dropped after the worker read its id", () => {
  it('fails the attempt "listener not connected" at once, and the next stream gets the delivery at once', async () => {
    const a = await tenantWithToken(t, { webhookAccess: true });
    const listener = await createListener(t.http, a.token, ['ticket.created']);
    const stream = await openStream(t.baseUrl, listener.streamPath, a.token);
    expect((await stream.next()).type).toBe('ready');

    const held = pause.next();
    const event = await recordTestEvent(t, a.tenantId, 'ticket.created');
    // The worker has read the stream's id; the stream drops before it notifies.
    await held.read;
    await stream.close();
    // Until the server has seen the stream drop (the listener has no stream).
    while (await streamHeld(t, listener.id)) await new Promise((resolve) => setTimeout(resolve, 10));
    held.release();

    const [waiting] = await waitForDeliveries(t, event.id, ([d]) => d?.attemptLog.length === 1);
    expect(waiting).toMatchObject({ status: 'pending' });
    expect(waiting.attemptLog[0]).toMatchObject({ attempt: 1, statusCode: null });
    expect(waiting.attemptLog[0].error).toMatch(/listener not connected/);

    const resumed = await openStream(t.baseUrl, listener.streamPath, a.token);
    expect((await resumed.next()).type).toBe('ready');
    const again = await resumed.next();
    expect(again).toMatchObject({ type: 'attempt', eventId: event.id, attempt: 2 });
    resumed.report(again, 200);
    await waitForDeliveries(t, event.id, ([d]) => d?.status === 'succeeded');
    await resumed.close();
  });
});

/**
 * Holds the relay's next read of a listener's row (the row with its stream id) once armed: `read` resolves
 * when the relay has it, and the relay goes on only at `release`.
 */
function listenerReadPause(): KyselyPlugin & { next(): { read: Promise<void>; release(): void } } {
  let armed: { read(): void; released: Promise<void> } | undefined;
  return {
    next() {
      let read!: () => void;
      let release!: () => void;
      const reading = new Promise<void>((resolve) => (read = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      armed = { read, released };
      return { read: reading, release };
    },
    transformQuery: ({ node }) => node,
    async transformResult({ result }): Promise<QueryResult<UnknownRow>> {
      const row = result.rows[0];
      const hold = armed;
      if (hold && row && 'stream_id' in row && 'alive_until' in row) {
        armed = undefined;
        hold.read();
        await hold.released;
      }
      return result;
    },
  };
}
