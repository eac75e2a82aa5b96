/**
 * The webhook verifier and the example receiver (examples/webhook-receiver) against real deliveries: the
 * service's delivery worker POSTs signed events to the receiver over HTTPS; the receiver verifies them
 * with `verifyWebhook`, stores each event id once, and answers 2xx only after storing. The captured
 * genuine deliveries then feed the verifier's refusals: tampered body, wrong secret, stale and future
 * timestamps, wrong version and algorithm headers.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type SiteVisitCreate,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  WebhookVerificationError,
} from '@site-services/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createReceiverHandler } from '../../examples/webhook-receiver/receiver.js';
import { type EventStore, openEventStore } from '../../examples/webhook-receiver/store.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { openEmptyDatabase, startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor } from '../helpers/client.js';
import { visitBody, visitTenant } from '../helpers/visits.js';
import {
  createTestCertificates,
  localResolver,
  startTestWorker,
  testWebhookConfig,
  waitForDeliveries,
} from '../helpers/webhooks.js';

interface Captured {
  headers: IncomingHttpHeaders;
  body: Buffer;
  status: number;
}

let t: TestApp;
let worker: DeliveryWorker;
let store: EventStore;
let storeDatabase: Awaited<ReturnType<typeof openEmptyDatabase>> | undefined;
let server: https.Server;
let port: number;
const captured: Captured[] = [];
const secrets = { current: 'receiver secrét ✓ 0123456789' };
/** Set to make the store fail once (the receiver must not answer 2xx then). */
let failNextSave = false;

beforeAll(async () => {
  // The example's store on PostgreSQL (a database of its own) when the suite runs there, else PGlite in memory.
  if (inject('databaseUrl')) storeDatabase = await openEmptyDatabase('ss_receiver_store');
  store = await openEventStore(storeDatabase?.url);
  const failing: EventStore = {
    ...store,
    save: async (event) => {
      if (failNextSave) {
        failNextSave = false;
        throw new Error('disk full');
      }
      return store.save(event);
    },
  };
  const handler = createReceiverHandler({ secret: [secrets.current], store: failing, path: '/webhooks' });
  const certificates = await createTestCertificates();
  server = https.createServer({ key: certificates.keyPem, cert: certificates.certPem }, (request, response) => {
    // Keep a copy of what arrived and what the receiver answered.
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('finish', () =>
      captured.push({ headers: request.headers, body: Buffer.concat(chunks), status: response.statusCode }),
    );
    void handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  t = await startTestApp({ config: { webhook: testWebhookConfig(port, { maxAttempts: 4 }) }, resolver: localResolver });
  worker = await startTestWorker(t, { caPem: certificates.caPem });
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await store?.close();
  await storeDatabase?.drop();
});

async function subscribedVisitTenant(subscriptions = 1) {
  const v = await visitTenant(t, { assets: 0 });
  const client = clientFor(t, v);
  for (let index = 0; index < subscriptions; index++) {
    await client.webhookSubscriptions.create({
      targetUrl: `https://localhost:${port}/webhooks`,
      eventTypes: ['ticket.created'],
      secret: secrets.current,
      description: `receiver ${index + 1}`,
    });
  }
  return { v, client };
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the example receiver on real deliveries', () => {
  it('stores a verified ticket.created once although it arrives twice (two subscriptions), answering 2xx both times', async () => {
    const { v, client } = await subscribedVisitTenant(2);
    const ticket = `INC-${randomUUID().slice(0, 8)}`;
    const visit = await client.siteVisits.create(visitBody(v, { clientTicketNumber: ticket }) as SiteVisitCreate);
    const arrived = () => captured.filter((entry) => entry.body.includes(visit.id));
    await eventually(async () => arrived().length >= 2);
    const [first, second] = arrived();
    expect(first!.headers['x-svc-event-id']).toBe(second!.headers['x-svc-event-id']);
    expect(first!.headers['x-svc-delivery-id']).not.toBe(second!.headers['x-svc-delivery-id']);
    expect([first!.status, second!.status]).toEqual([200, 200]);
    const eventId = first!.headers['x-svc-event-id'] as string;
    expect(await store.count(eventId)).toBe(1);
    const deliveries = await waitForDeliveries(
      t,
      eventId,
      (list) => list.length === 2 && list.every((delivery) => delivery.status === 'succeeded'),
    );
    expect(deliveries.map((delivery) => delivery.attempts)).toEqual([1, 1]);

    const event = verifyWebhook({ headers: first!.headers, rawBody: first!.body, secret: secrets.current });
    expect(event.type).toBe('ticket.created');
    if (event.type === 'ticket.created') {
      const created: WebhookEventOf<'ticket.created'> = event;
      expect(created).toMatchObject({
        id: eventId,
        resourceType: 'site-visits',
        resourceId: visit.id,
        data: { clientTicketNumber: ticket, clientSiteId: v.siteCode, status: 'New' },
      });
    }
  });

  it('answers non-2xx when it cannot store the event, so the service delivers it again', async () => {
    const { v, client } = await subscribedVisitTenant();
    failNextSave = true;
    const visit = await client.siteVisits.create(visitBody(v) as SiteVisitCreate);
    const arrived = () => captured.filter((entry) => entry.body.includes(visit.id));
    await eventually(async () => arrived().some((entry) => entry.status === 200));
    expect(arrived().map((entry) => [entry.headers['x-svc-attempt'], entry.status])).toEqual([
      ['1', 500],
      ['2', 200],
    ]);
    expect(await store.count(arrived()[0]!.headers['x-svc-event-id'] as string)).toBe(1);
  });

  it('refuses a tampered delivery with 401 and stores nothing', async () => {
    const genuine = captured.find((entry) => entry.status === 200)!;
    const tampered = Buffer.from(genuine.body.toString().replace('"status":"New"', '"status":"Completed"'));
    const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
    const forged = Buffer.from(tampered.toString().replace(/"id":"evt_[^"]+"/, `"id":"${eventId}"`));
    const status = await new Promise<number>((resolve, reject) => {
      const request = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/webhooks',
          method: 'POST',
          rejectUnauthorized: false,
          headers: { ...genuine.headers, 'content-length': forged.length },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode!);
        },
      );
      request.on('error', reject);
      request.end(forged);
    });
    expect(status).toBe(401);
    expect(await store.has(eventId)).toBe(false);
  });
});

it('types the seven event types of the document as one union', () => {
  // A missing or extra key fails type checking: the union is generated from the document's webhooks map.
  const types: Record<WebhookEventType, true> = {
    'ticket.created': true,
    'rep.assigned': true,
    'job.scheduled': true,
    'schedule.updated': true,
    'job.dispatched': true,
    'job.completed': true,
    'deliverables.transmitted': true,
  };
  expect(Object.keys(types)).toHaveLength(7);
});

describe('verifyWebhook on a genuine delivery', () => {
  let genuine: Captured;
  let timestamp: number;
  beforeAll(async () => {
    if (!captured.some((entry) => entry.status === 200)) {
      const { v, client } = await subscribedVisitTenant();
      const visit = await client.siteVisits.create(visitBody(v) as SiteVisitCreate);
      await eventually(async () => captured.some((entry) => entry.body.includes(visit.id) && entry.status === 200));
    }
    genuine = captured.find((entry) => entry.status === 200)!;
    timestamp = Number(genuine.headers['x-svc-timestamp']);
  });

  const refusal = (input: Partial<Parameters<typeof verifyWebhook>[0]>) => {
    try {
      verifyWebhook({
        headers: genuine.headers,
        rawBody: genuine.body,
        secret: secrets.current,
        now: timestamp * 1000,
        ...input,
      });
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookVerificationError);
      return (error as WebhookVerificationError).reason;
    }
    return 'accepted';
  };

  it('accepts it (also from a fetch Headers and a string body), with the secret among several during a rotation', () => {
    expect(refusal({})).toBe('accepted');
    const headers = new Headers();
    for (const [name, value] of Object.entries(genuine.headers))
      if (typeof value === 'string') headers.set(name, value);
    expect(refusal({ headers, rawBody: genuine.body.toString('utf8') })).toBe('accepted');
    expect(refusal({ secret: ['an older secret of the receiver', secrets.current] })).toBe('accepted');
    const event: WebhookEvent = verifyWebhook({
      headers: genuine.headers,
      rawBody: genuine.body,
      secret: secrets.current,
      now: new Date(timestamp * 1000),
    });
    expect(event.id).toBe(genuine.headers['x-svc-event-id']);
  });

  it('refuses a tampered body and a wrong secret', () => {
    const body = Buffer.from(genuine.body);
    body.writeUInt8(body.readUInt8(body.length - 2) ^ 1, body.length - 2);
    expect(refusal({ rawBody: body })).toBe('signature');
    expect(refusal({ rawBody: Buffer.concat([genuine.body, Buffer.from(' ')]) })).toBe('signature');
    expect(refusal({ rawBody: JSON.stringify(JSON.parse(genuine.body.toString()), null, 1) })).toBe('signature');
    expect(refusal({ secret: `${secrets.current} ` })).toBe('signature');
    expect(refusal({ secret: secrets.current.normalize('NFD') })).toBe('signature');
    expect(refusal({ secret: [] })).toBe('signature');
  });

  it('takes the ArrayBuffer of a fetch Request, and refuses a parsed body (express.json()) with a TypeError saying so', () => {
    const bytes = genuine.body.buffer.slice(genuine.body.byteOffset, genuine.body.byteOffset + genuine.body.length);
    expect(refusal({ rawBody: bytes as ArrayBuffer })).toBe('accepted');
    const verify = (rawBody: unknown) => () =>
      verifyWebhook({
        headers: genuine.headers,
        rawBody: rawBody as never,
        secret: secrets.current,
        now: timestamp * 1000,
      });
    // express.json() leaves an object (or {} for another content type); an unread stream leaves undefined.
    for (const parsed of [JSON.parse(genuine.body.toString()), {}, undefined, null]) {
      expect(verify(parsed)).toThrow(TypeError);
      expect(verify(parsed)).toThrow(/^verifyWebhook: rawBody must be the request body exactly as received/);
      expect(verify(parsed)).toThrow("express.raw({ type: 'application/json' })");
    }
  });

  it('says what a mismatch or a stale timestamp most likely means', () => {
    const message = (input: Partial<Parameters<typeof verifyWebhook>[0]>) => {
      try {
        verifyWebhook({ headers: genuine.headers, rawBody: genuine.body, secret: secrets.current, ...input });
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(message({ secret: 'another secret of sixteen', now: timestamp * 1000 })).toMatch(
      /^x-svc-signature does not match: the secret is not the one .* or the body was changed before verification/,
    );
    expect(message({ now: (timestamp + 400) * 1000 })).toMatch(
      /^x-svc-timestamp is 400 seconds behind this receiver's clock \(at most 300 allowed\).*clock is wrong/,
    );
    expect(message({ now: (timestamp - 400) * 1000 })).toMatch(
      /^x-svc-timestamp is 400 seconds ahead of this receiver's/,
    );
  });

  it('accepts a timestamp up to 300 seconds either way and refuses stale and future ones beyond', () => {
    expect(refusal({ now: (timestamp + 300) * 1000 })).toBe('accepted');
    expect(refusal({ now: (timestamp - 300) * 1000 })).toBe('accepted');
    expect(refusal({ now: (timestamp + 301) * 1000 })).toBe('stale');
    expect(refusal({ now: (timestamp - 301) * 1000 })).toBe('stale');
    expect(refusal({ now: (timestamp + 30) * 1000, toleranceSeconds: 10 })).toBe('stale');
    // The timestamp is signed: moving it forward to look fresh breaks the signature.
    expect(
      refusal({ headers: { ...genuine.headers, 'x-svc-timestamp': String(timestamp + 1) }, now: timestamp * 1000 }),
    ).toBe('signature');
    for (const bad of ['', '01', `${timestamp}.0`, ' 1', '1e9', '-1']) {
      expect(refusal({ headers: { ...genuine.headers, 'x-svc-timestamp': bad } })).toBe('timestamp');
    }
  });

  it('never accepts with an invalid clock or tolerance (NaN, infinite, negative): a usage error, however old the delivery', () => {
    const verify = (input: Partial<Parameters<typeof verifyWebhook>[0]>) => () =>
      verifyWebhook({ headers: genuine.headers, rawBody: genuine.body, secret: secrets.current, ...input });
    const replayed = (timestamp + 86_400 * 365) * 1000;
    const invalid = {
      'tolerance NaN': { toleranceSeconds: Number.NaN },
      'tolerance Infinity': { toleranceSeconds: Number.POSITIVE_INFINITY },
      'tolerance -1': { toleranceSeconds: -1 },
      'tolerance "300"': { toleranceSeconds: '300' as never },
      'now NaN': { now: Number.NaN },
      'now Invalid Date': { now: new Date('not a date') },
      'now Infinity': { now: Number.POSITIVE_INFINITY },
    };
    for (const [label, input] of Object.entries(invalid)) {
      expect(verify({ now: replayed, ...input }), label).toThrow(RangeError);
      expect(verify({ now: timestamp * 1000, ...input }), label).toThrow(/^verifyWebhook: (toleranceSeconds|now) must/);
    }
    // The message an integrator reads names the default, not a document they do not have.
    expect(verify({ toleranceSeconds: -1 })).toThrow('0 or more (default 300), got -1');
    expect(refusal({ toleranceSeconds: 0 })).toBe('accepted');
  });

  it('never verifies under an empty or short secret (an unset variable read as ""): a usage error, not a pass', () => {
    const timestampText = String(timestamp);
    // What anyone can compute without knowing the subscription's secret.
    const forgedUnder = (secret: string) => ({
      headers: {
        ...genuine.headers,
        'x-svc-signature': createHmac('sha256', secret).update(`${timestampText}.`).update(genuine.body).digest('hex'),
      },
      rawBody: genuine.body,
      now: timestamp * 1000,
    });
    for (const secret of ['', 'changeme', '123456789012345']) {
      expect(() => verifyWebhook({ ...forgedUnder(secret), secret }), JSON.stringify(secret)).toThrow(
        /^verifyWebhook: every secret must be text of at least 16 characters/,
      );
      expect(() => verifyWebhook({ ...forgedUnder(secret), secret: [secrets.current, secret] })).toThrow(RangeError);
    }
    for (const secret of [undefined, null, 42]) {
      expect(() => verifyWebhook({ ...forgedUnder(''), secret: secret as never })).toThrow(RangeError);
    }
    // Sixteen characters (code points, as the service counts them) is a secret the service may sign with.
    expect(refusal({ secret: '✓'.repeat(16) })).toBe('signature');
  });

  it('refuses a wrong or missing version or algorithm header, never falling back to legacy', () => {
    const { 'x-svc-signature-version': _version, 'x-svc-timestamp': _timestamp, ...legacyShaped } = genuine.headers;
    expect(refusal({ headers: legacyShaped })).toBe('version');
    expect(refusal({ headers: { ...genuine.headers, 'x-svc-signature-version': 'v2' } })).toBe('version');
    // The message says which case it is, and what to do.
    const message = (headers: IncomingHttpHeaders) => {
      try {
        verifyWebhook({ headers, rawBody: genuine.body, secret: secrets.current, now: timestamp * 1000 });
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(message(legacyShaped)).toMatch(/^no x-svc-signature-version header: a legacy subscription .* moved to v1/);
    expect(message({ 'content-type': 'application/json' })).toMatch(
      /^no x-svc-signature-version or x-svc-signature header: .* removed the x-svc-\* headers; pass them through$/,
    );
    expect(message({ ...genuine.headers, 'x-svc-signature-version': 'v2' })).toBe(
      'x-svc-signature-version is "v2", not v1',
    );
    expect(refusal({ headers: { ...genuine.headers, 'x-svc-signature-version': 'V1' } })).toBe('version');
    expect(refusal({ headers: { ...genuine.headers, 'x-svc-signature-alg': 'hmac-sha1' } })).toBe('algorithm');
    expect(
      refusal({
        headers: {
          ...genuine.headers,
          'x-svc-signature': (genuine.headers['x-svc-signature'] as string).toUpperCase(),
        },
      }),
    ).toBe('signature');
    expect(refusal({ headers: { ...genuine.headers, 'x-svc-signature': ['a', 'b'] } })).toBe('signature');
  });
});
