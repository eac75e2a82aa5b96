/**
 * The destination at delivery time: the policy is applied again before every attempt (a name that now
 * resolves to a private address is refused without a connection; a stored target it refuses by its text, such
 * as a name DNS cannot carry, fails at once without a lookup), the connection goes to the address that
 * was checked (no second lookup), and TLS is verified against the host name.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsFailure, type Resolver } from '../../src/modules/outbox/resolvers.js';
import type { WebhookTransport } from '../../src/modules/outbox/transport.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  createTestCertificates,
  createTestWorker,
  deliveredNow,
  recordTestEvent,
  TestReceiver,
  testWebhookConfig,
} from '../helpers/webhooks.js';

/** Names only this test's resolver knows (the operating system cannot resolve them). */
const answers = new Map<string, string[]>([
  ['localhost', ['127.0.0.1']],
  ['hooks.test', ['127.0.0.1']],
  ['wrong-name.test', ['127.0.0.1']],
]);
/** The names looked up, in order. */
const lookups: string[] = [];
const resolver: Resolver = async (hostname) => {
  lookups.push(hostname);
  const found = answers.get(hostname);
  if (!found) throw new DnsFailure(true, `${hostname} is unknown`);
  return found;
};

let receiver: TestReceiver;
let untrusted: TestReceiver;
let closedPort: number;
let t: TestApp;

/** A port nothing listens on (taken, then released). */
function unusedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
let worker: DeliveryWorker;

/** A transport that never connects, and the URLs it was asked to send to. */
function spyTransport(): { sent: string[]; spy: WebhookTransport } {
  const sent: string[] = [];
  const spy: WebhookTransport = {
    send: async (request) => {
      sent.push(request.url.href);
      throw new Error('the spy transport never connects');
    },
    close: async () => undefined,
  };
  return { sent, spy };
}

beforeAll(async () => {
  receiver = await TestReceiver.start(await createTestCertificates(['localhost', 'hooks.test', 'gone.test']));
  untrusted = await TestReceiver.start();
  closedPort = await unusedPort();
  const allowed = ['localhost', 'hooks.test', 'wrong-name.test', 'gone.test'].map((host) => `${host}:${receiver.port}`);
  t = await startTestApp({
    config: {
      webhook: {
        ...testWebhookConfig(receiver.port),
        testAllowedDestinations: [...allowed, `localhost:${untrusted.port}`, `localhost:${closedPort}`],
      },
    },
    resolver,
  });
  worker = createTestWorker(t, receiver, { deps: { resolver } });
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await Promise.all([receiver?.close(), untrusted?.close()]);
});

async function subscribe(targetUrl: string) {
  const tenant = await tenantWithToken(t);
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: tenant.token,
    json: { targetUrl, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
  });
  expect(created.status).toBe(201);
  return tenant;
}

describe('webhook destinations at delivery', () => {
  it('connects to the checked address while TLS verifies the host name (a name the system cannot resolve)', async () => {
    const endpoint = receiver.endpoint();
    const tenant = await subscribe(receiver.url(endpoint.path, 'hooks.test'));
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(endpoint.requests[0]!.headers.host).toBe(`hooks.test:${receiver.port}`);
  });

  it('refuses at delivery a destination that now resolves to a private address (mixed answers too), without connecting', async () => {
    // A destination on port 443 that passed the check at create; at delivery DNS answers differently.
    answers.set('rebinding.example', ['93.184.216.34']);
    const { sent, spy } = spyTransport();
    const tenant = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: {
        targetUrl: 'https://rebinding.example/hook',
        eventTypes: ['ticket.created'],
        secret: 'a shared secret, 16+',
      },
    });
    expect(created.status).toBe(201);
    const strict = createTestWorker(t, receiver, { deps: { resolver, transport: spy } });
    try {
      answers.set('rebinding.example', ['93.184.216.34', '10.0.0.5']);
      const mixed = await recordTestEvent(t, tenant.tenantId);
      const [first] = await deliveredNow(t, strict, mixed.id);
      expect(first).toMatchObject({ status: 'failed', attempts: 1 });
      expect(first.lastError).toBe('destination refused: rebinding.example resolves to 10.0.0.5, a private address');

      answers.set('rebinding.example', ['169.254.169.254']);
      const metadata = await recordTestEvent(t, tenant.tenantId);
      const [second] = await deliveredNow(t, strict, metadata.id);
      expect(second.lastError).toMatch(/169\.254\.169\.254, a cloud metadata address/);
      expect(sent).toEqual([]);
    } finally {
      await strict.stop();
    }
  });

  it('fails the delivery at once when the host name stops resolving', async () => {
    const endpoint = receiver.endpoint();
    answers.set('gone.test', ['127.0.0.1']);
    const tenant = await subscribe(receiver.url(endpoint.path, 'gone.test'));
    answers.delete('gone.test');
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'destination refused: gone.test does not resolve',
    });
    expect(endpoint.requests).toHaveLength(0);
  });

  it('fails the delivery at once when the stored target has a name DNS cannot carry or white space, without a lookup', async () => {
    // Targets stored before the policy refused them (written here behind the API's back); DNS would answer both.
    const long = `${'a.'.repeat(130)}com`;
    answers.set(long, ['93.184.216.34']);
    answers.set('public.test', ['93.184.216.34']);
    const { sent, spy } = spyTransport();
    const strict = createTestWorker(t, receiver, { deps: { resolver, transport: spy } });
    try {
      for (const [targetUrl, reason] of [
        [
          `https://${long}/hook`,
          "the URL's host is not a DNS name: 263 characters, more than the 253 a DNS name may have",
        ],
        [' https://public.test/hook', 'must not contain white space or control characters (U+0020 at character 1)'],
      ] as const) {
        const tenant = await subscribe(receiver.url(receiver.endpoint().path, 'hooks.test'));
        await t.database.db
          .updateTable('webhook_subscriptions')
          .set({ target_url: targetUrl })
          .where('tenant_id', '=', tenant.tenantId)
          .execute();
        lookups.length = 0;
        const event = await recordTestEvent(t, tenant.tenantId);
        const [delivery] = await deliveredNow(t, strict, event.id);
        expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastError: `destination refused: ${reason}` });
        expect(lookups).toEqual([]);
      }
      expect(sent).toEqual([]);
    } finally {
      await strict.stop();
      answers.delete(long);
      answers.delete('public.test');
    }
  });

  it('treats a certificate for another name as a failed attempt and retries', async () => {
    const endpoint = receiver.endpoint();
    const tenant = await subscribe(receiver.url(endpoint.path, 'wrong-name.test'));
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3 });
    expect(
      delivery.attemptLog.every((entry: any) => entry.statusCode === null && /altnames|ALTNAME/i.test(entry.error)),
    ).toBe(true);
    expect(endpoint.requests).toHaveLength(0);
  });

  it('treats a certificate from an untrusted authority as a failed attempt and retries', async () => {
    const endpoint = untrusted.endpoint();
    const tenant = await subscribe(untrusted.url(endpoint.path));
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3 });
    expect(delivery.lastError).toMatch(/certificate|UNABLE_TO_VERIFY/i);
    expect(endpoint.requests).toHaveLength(0);
  });

  it('retries a refused connection and records the network error', async () => {
    const tenant = await subscribe(`https://localhost:${closedPort}/nothing-listens-here`);
    const event = await recordTestEvent(t, tenant.tenantId);
    const [delivery] = await deliveredNow(t, worker, event.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3 });
    expect(delivery.attemptLog.map((entry: any) => entry.statusCode)).toEqual([null, null, null]);
    expect(delivery.lastError).toMatch(/ECONNREFUSED/);
  });
});
