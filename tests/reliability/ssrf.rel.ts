/**
 * SSRF: every hostile destination of the shared table (tests/helpers/hostile-destinations.ts) and the
 * notations added here is refused when a subscription is created (422 naming targetUrl) and again when a
 * delivery is attempted (the subscription's target is replaced in the database behind the API's back,
 * as if the policy had been weaker when it was stored): the delivery fails at once, the transport is
 * never asked to send, and a loopback canary on port 443 sees 0 connections. A name whose DNS answer
 * changes after the subscription was checked, and receivers redirecting to the canary, are refused at
 * delivery. Ten public destinations are accepted at both points (the transport answers them in-process:
 * nothing leaves 127.0.0.1).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TransportRequest, PinnedTransport, type WebhookTransport } from '../../src/modules/outbox/transport.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsAnswer, HOSTILE_DNS_ALLOWED, REFUSED, tableResolver } from '../helpers/hostile-destinations.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  recordTestEvent,
  startTestWorker,
  settled,
  TestReceiver,
  testWebhookConfig,
  waitForDeliveries,
} from '../helpers/webhooks.js';
import { type Canary, startCanary } from './lib/canary.js';
import { reportFigure } from './lib/figures.js';

/** Notations the shared table does not spell (zone ids, unicode, percent-encoding, more IPv4 forms, userinfo). */
const MORE_REFUSED: Array<[string, string]> = [
  ['IPv6 zone id, unencoded', 'https://[fe80::1%eth0]/'],
  ['IPv6 loopback with a zone id', 'https://[::1%25lo]/'],
  ['localhost in circled letters', 'https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/'],
  ['localhost percent-encoded', 'https://%6c%6f%63%61%6c%68%6f%73%74/'],
  ['loopback with ideographic dots', 'https://127。0。0。1/'],
  ['private 10/8 in decimal', 'https://167772161/'],
  ['private 10/8 in octal', 'https://012.0.0.1/'],
  ['loopback in hex short form', 'https://0x7f.1/'],
  ['loopback in octal with padding', 'https://0000177.0.0.01/'],
  ['private 192.168 short form', 'https://192.168.1/'],
  ['metadata in decimal', 'https://2852039166/'],
  ['IPv4-mapped loopback in hex', 'https://[::ffff:7f00:1]/'],
  ['NAT64 of loopback', 'https://[64:ff9b::127.0.0.1]/'],
  ['public userinfo before a loopback host', 'https://public.example@127.0.0.1/'],
  ['port 0', 'https://public.example:0/'],
  ['port beyond 65535', 'https://public.example:65536/'],
];

const PUBLIC: string[] = [
  'https://public.example/hooks/site-services',
  'https://public6.example/',
  'https://dual.example/',
  'https://public.example:443/hook',
  'https://93.184.216.34/',
  'https://[2606:4700:4700::1111]/',
  'https://[::ffff:8.8.8.8]/',
  'https://PUBLIC.EXAMPLE/hook?tenant=1',
  'https://8.8.8.8/webhooks',
  'https://xn--bcher-kva.example/hook',
];

/** A name answering a public address for the subscription check and loopback ever after (DNS rebinding). */
const REBINDING = 'https://rebind.example/hook';
const lookups = new Map<string, number>();
const resolver = tableResolver((hostname): DnsAnswer | undefined => {
  const seen = (lookups.get(hostname) ?? 0) + 1;
  lookups.set(hostname, seen);
  if (hostname === 'rebind.example') return seen === 1 ? ['93.184.216.34'] : ['127.0.0.1'];
  if (hostname === 'xn--bcher-kva.example') return ['93.184.216.35'];
  return undefined;
});

const isLoopback = (address: string) => address.startsWith('127.') || address === '::1';

let t: TestApp;
let receiver: TestReceiver;
let canary: Canary;
const sends: TransportRequest[] = [];
let real: PinnedTransport;
/** Loopback sends go out for real (so that a policy failure would reach the canary); public ones are answered 200 here. */
const transport: WebhookTransport = {
  async send(request) {
    sends.push(request);
    if (request.addresses.every(isLoopback)) return real.send(request);
    return { statusCode: 200 };
  },
  close: async () => undefined,
};

beforeAll(async () => {
  canary = await startCanary();
  receiver = await TestReceiver.start();
  real = new PinnedTransport({ connectTimeoutMs: 2_000, connections: 4, extraCa: [receiver.caPem] });
  const webhook = {
    ...testWebhookConfig(receiver.port),
    testAllowedDestinations: [...HOSTILE_DNS_ALLOWED, `localhost:${receiver.port}`],
    maxAttempts: 2,
  };
  t = await startTestApp({ config: { webhook }, resolver });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await real?.close();
  await canary?.close();
});

async function subscribe(token: string, targetUrl: string) {
  return t.http.post('/api/v1/webhook-subscriptions', {
    token,
    json: { targetUrl, eventTypes: ['ticket.created'], secret: 'a secret of sixteen+' },
  });
}

it('refuses every hostile destination at subscription and at delivery; accepts public ones; 0 canary hits', async () => {
  const hostile = [...REFUSED.map(([name, url]) => [name, url] as [string, string]), ...MORE_REFUSED];
  expect(hostile.length).toBeGreaterThanOrEqual(60);
  // Well over a hundred subscriptions of one tenant: the operator raises its cap on active subscriptions.
  const tenant = await tenantWithToken(t, { maxActiveSubscriptions: 1000 });

  // At subscription time: 422 naming targetUrl, for every one.
  const refusedAtCreate: string[] = [];
  for (const [name, url] of hostile) {
    const response = await subscribe(tenant.token, url);
    expect(response.status, `${name} (${url}): ${response.text}`).toBe(422);
    expect(Object.keys(response.body.errors), name).toEqual(['targetUrl']);
    refusedAtCreate.push(url);
  }
  const publicAccepted = [];
  for (const url of PUBLIC) {
    const response = await subscribe(tenant.token, url);
    expect(response.status, `${url}: ${response.text}`).toBe(201);
    publicAccepted.push(response.body.data.id as string);
  }
  expect((await subscribe(tenant.token, REBINDING)).status).toBe(201);

  // At delivery time: subscriptions whose stored target is hostile (written past the API), one event.
  const hostileIds = new Map<string, string>();
  for (const [name, url] of hostile) {
    const created = await subscribe(tenant.token, 'https://public.example/placeholder');
    expect(created.status).toBe(201);
    await t.database.db
      .updateTable('webhook_subscriptions')
      .set({ target_url: url })
      .where('id', '=', created.body.data.id)
      .execute();
    hostileIds.set(created.body.data.id, name);
  }
  const redirecting = [302, 307, 308].map((status) =>
    receiver.endpoint(() => ({ status, headers: { location: `https://127.0.0.1:${canary.port}/` } })),
  );
  for (const endpoint of redirecting) expect((await subscribe(tenant.token, endpoint.url)).status).toBe(201);

  const worker = await startTestWorker(t, receiver, {
    config: { maxAttempts: 2 },
    deps: { transport, resolver },
  });
  try {
    const event = await recordTestEvent(t, tenant.tenantId);
    const deliveries = await waitForDeliveries(
      t,
      event.id,
      (all) => all.length === hostile.length + PUBLIC.length + 1 + redirecting.length && settled(all),
      60_000,
    );
    const bySubscription = new Map(deliveries.map((delivery) => [delivery.subscriptionId as string, delivery]));
    const subscriptions = (await t.database.db
      .selectFrom('webhook_subscriptions')
      .select(['id', 'target_url'])
      .where('tenant_id', '=', tenant.tenantId)
      .execute()) as Array<{ id: string; target_url: string }>;
    const targetOf = new Map(subscriptions.map((row) => [row.id, row.target_url]));

    let refusedAtDelivery = 0;
    for (const [id, name] of hostileIds) {
      const delivery = bySubscription.get(id)!;
      expect(delivery.status, `${name}: ${JSON.stringify(delivery)}`).toBe('failed');
      refusedAtDelivery++;
    }
    const rebinding = deliveries.find((delivery) => targetOf.get(delivery.subscriptionId) === REBINDING)!;
    expect(rebinding.status, JSON.stringify(rebinding)).toBe('failed');
    expect(rebinding.lastError).toMatch(/loopback/);
    for (const endpoint of redirecting) {
      const delivery = deliveries.find((each) => targetOf.get(each.subscriptionId) === endpoint.url)!;
      expect(delivery.status).toBe('failed');
      expect(delivery.lastError).toMatch(/redirect/);
      expect(endpoint.requests).toHaveLength(1);
    }
    for (const id of publicAccepted) expect(bySubscription.get(id)!.status).toBe('succeeded');

    // The transport was asked to send only to the public destinations and the redirecting receivers.
    const hostileUrls = new Set([...hostile.map(([, url]) => url), REBINDING]);
    const hostileSends = sends.filter(
      (request) =>
        hostileUrls.has(request.url.href) ||
        request.addresses.some((address) => isLoopback(address) && !request.url.port),
    );
    expect(hostileSends).toEqual([]);
    expect(sends.filter((request) => !request.addresses.every(isLoopback))).toHaveLength(PUBLIC.length);
    expect(canary.hits()).toBe(0);

    reportFigure(
      'ssrf',
      `${refusedAtCreate.length}/${hostile.length} rejected at subscription, ${refusedAtDelivery + 1}/${hostile.length + 1} rejected at delivery (incl. 1 DNS rebinding), ` +
        `${redirecting.length}/${redirecting.length} redirects not followed, ${PUBLIC.length}/${PUBLIC.length} public accepted, ${hostileSends.length} hostile sends, ${canary.hits()} canary hits`,
    );
  } finally {
    await worker.stop();
  }
});
