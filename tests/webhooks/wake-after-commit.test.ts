/**
 * Waking the workers after commit (db/transaction.ts, outbox/wake-workers.ts): a transaction opened with
 * `transaction()` wakes the workers by a notify after its commit, outside it; a worker of another process
 * sharing the database is woken by it; a rolled-back transaction wakes nobody. A wake that fails while the
 * service stops is the app's logger's, and no warning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForNotifications } from '../../src/db/notifications.js';
import { transaction } from '../../src/db/transaction.js';
import { DELIVERY_CHANNEL, notifyWorkers, wakeWorkers } from '../../src/modules/outbox/wake-workers.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { capturedLog, LOG_LEVEL } from '../helpers/log-lines.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  localResolver,
  recordTicketCreated,
  secondDatabaseHandle,
  startTestWorker,
  TestReceiver,
  testWebhookConfig,
} from '../helpers/webhooks.js';

let receiver: TestReceiver;
let t: TestApp;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  receiver = await TestReceiver.start();
  t = await startTestApp({ config: { webhook: testWebhookConfig(receiver.port) }, resolver: localResolver });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await t?.close();
  await receiver?.close();
});

/** The wakes heard on the delivery channel (the listener's own call after connecting has no payload). */
async function countWakes() {
  const heard: string[] = [];
  const listener = await listenForNotifications(
    t.database,
    DELIVERY_CHANNEL,
    (payload) => {
      if (payload !== undefined) heard.push(payload);
    },
    t.logger,
  );
  closers.push(() => listener.close());
  return heard;
}

async function until(done: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('waking the workers after commit', () => {
  it("wakes a worker of another process sharing the database, long before that worker's poll", async () => {
    const second = secondDatabaseHandle(t);
    closers.push(second.close);
    let worker: DeliveryWorker | undefined = await startTestWorker(t, receiver, {
      database: second.database,
      config: { pollIntervalMs: 60_000 },
    });
    closers.push(() => worker?.stop() ?? Promise.resolve());
    const endpoint = receiver.endpoint();
    const tenant = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: { targetUrl: endpoint.url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
    });
    expect(created.status).toBe(201);
    // Let the worker's first pass (at start) finish, so only a notification can wake it.
    await new Promise((resolve) => setTimeout(resolve, 50));

    for (let index = 0; index < 5; index++) {
      const event = await recordTicketCreated(t, tenant.tenantId);
      const [request] = (await endpoint.waitFor(index + 1, 20_000)).slice(index);
      expect(request!.headers['x-svc-event-id']).toBe(event.id);
    }
    await worker.stop();
    worker = undefined;
  });

  it('sends the wake after the commit, and none for a rolled-back transaction', async () => {
    const heard = await countWakes();
    const ran: string[] = [];
    await expect(
      transaction(t.database.db, undefined, async (tx) => {
        await notifyWorkers(tx);
        ran.push('work');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(ran).toEqual(['work']);

    // The committed one after it is heard, and it alone: the rolled-back one registered a wake that never ran.
    await transaction(t.database.db, undefined, (tx) => notifyWorkers(tx));
    await until(() => heard.length >= 1);
    // A third, committed wake proves the channel is quiet between them rather than merely slow.
    await transaction(t.database.db, undefined, (tx) => notifyWorkers(tx));
    await until(() => heard.length >= 2);
    expect(heard).toEqual(['', '']);
  });

  it("logs a wake failing because the app's database closed to the app's logger, and not as a warning", async () => {
    const log = capturedLog();
    const stopped = await startTestApp({ logger: log.logger });
    // A database the app has used (/ready asks it), as any serving app's is.
    expect((await stopped.http.get('/ready')).status).toBe(200);
    // As at shutdown (server.ts): the app closes, then its database; a commit's wake comes late.
    await stopped.close();
    wakeWorkers(stopped.database.db);

    const dropped = await log.waitFor((line) => line.component === 'wake-workers');
    expect(dropped).toMatchObject({ level: LOG_LEVEL.debug, msg: 'a wake was dropped: the database is closing' });
    expect(log.lines.filter((line) => line.level >= LOG_LEVEL.warn)).toEqual([]);
  });
});
