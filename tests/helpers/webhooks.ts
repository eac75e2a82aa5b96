/**
 * Webhook test kit: a certificate authority made for the run, a real HTTPS receiver on 127.0.0.1 that
 * records what arrives, an independent v1 verifier written from SPEC "Signature (v1)", events recorded
 * the way creates record them, and delivery workers wired to the test app's database.
 *
 * The delivery tests record events by calling recordEvent in a transaction on the app's database, to
 * exercise delivery apart from what produces events; tests/webhooks/visit-events.test.ts produces them
 * through the HTTP paths that do (site-visit creates and the operator workflow).
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { WebhookConfig } from '../../src/config.js';
import type { AppDatabase } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/database.js';
import { transaction } from '../../src/db/transaction.js';
import { systemClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { EVENT_ENVELOPE_SCHEMAS } from '../../src/modules/outbox/event-schemas.js';
import { type NewEvent, recordEvent } from '../../src/modules/outbox/service.js';
import type { EventType } from '../../src/modules/outbox/types.js';
import { ListenerRelay } from '../../src/modules/webhook-listeners/relay.js';
import type { Resolver } from '../../src/modules/outbox/resolvers.js';
import { DeliveryWorker, type DeliveryWorkerDeps } from '../../src/modules/outbox/worker.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { databaseUrlOf, startTestApp, type TestApp, type TestAppOptions } from './app.js';
import { createTestCertificates, type TestCertificates } from './certificates.js';
import { visitTenant, type VisitTenant } from './visits.js';

export { createTestCertificates, type TestCertificates };

// ---------------------------------------------------------------------------------------------
// The receiver

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  receivedAt: number;
}

/** What an endpoint answers: a status, a status with headers, or 'hang' (never answer). */
export type Reply = number | { status: number; headers?: Record<string, string> } | 'hang';
export type Responder = (request: ReceivedRequest, index: number) => Reply | Promise<Reply>;

export interface Endpoint {
  url: string;
  path: string;
  requests: ReceivedRequest[];
  /** Replaces what the endpoint answers from now on. */
  respond(responder: Responder): void;
  /** Resolves with the requests once at least `count` have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
}

export class TestReceiver {
  private readonly endpoints = new Map<
    string,
    { endpoint: Endpoint; responder: Responder; waiters: Array<() => boolean> }
  >();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: https.Server,
    readonly port: number,
    readonly certificates: TestCertificates,
  ) {}

  static async start(certificates?: TestCertificates): Promise<TestReceiver> {
    const certs = certificates ?? (await createTestCertificates());
    const server = https.createServer({ key: certs.keyPem, cert: certs.certPem });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('receiver has no port');
    const receiver = new TestReceiver(server, address.port, certs);
    server.on('secureConnection', (socket: Socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: ReceivedRequest = {
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks),
          receivedAt: Date.now(),
        };
        void receiver.handle(received, response);
      });
    });
    return receiver;
  }

  get caPem(): string {
    return this.certificates.caPem;
  }

  /** The address of a subscription target (the host name is what TLS verifies). */
  url(path: string, host = 'localhost'): string {
    return `https://${host}:${this.port}${path}`;
  }

  /** A fresh path of its own, answering with `responder` (200 by default). */
  endpoint(responder: Responder = () => 200): Endpoint {
    const path = `/hooks/${randomUUID()}`;
    const entry = {
      responder,
      waiters: [] as Array<() => boolean>,
      endpoint: undefined as unknown as Endpoint,
    };
    const requests: ReceivedRequest[] = [];
    entry.endpoint = {
      url: this.url(path),
      path,
      requests,
      respond: (next) => {
        entry.responder = next;
      },
      waitFor: (count, timeoutMs = 60_000) =>
        new Promise<ReceivedRequest[]>((resolve, reject) => {
          const check = () => {
            if (requests.length < count) return false;
            clearTimeout(timer);
            resolve(requests);
            return true;
          };
          const timer = setTimeout(
            () => reject(new Error(`expected ${count} requests at ${path}, got ${requests.length}`)),
            timeoutMs,
          );
          if (!check()) entry.waiters.push(check);
        }),
    };
    this.endpoints.set(path, entry);
    return entry.endpoint;
  }

  private async handle(request: ReceivedRequest, response: import('node:http').ServerResponse): Promise<void> {
    const entry = this.endpoints.get(request.path);
    if (!entry) {
      response.writeHead(404).end();
      return;
    }
    entry.endpoint.requests.push(request);
    entry.waiters = entry.waiters.filter((waiter) => !waiter());
    const reply = await entry.responder(request, entry.endpoint.requests.length - 1);
    if (reply === 'hang') return;
    const { status, headers } = typeof reply === 'number' ? { status: reply, headers: {} } : reply;
    response.writeHead(status, headers).end('ok');
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------
// Verification, written from SPEC "Signature (v1)" alone

export type Verification = { ok: true; event: Record<string, unknown> } | { ok: false; reason: string };

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A receiver's check: pinned version and algorithm, a timestamp within 300 s of the receiver's clock,
 * the digest compared in constant time, and only then the JSON parsed. No legacy fallback.
 */
export function verifyV1(
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Verification {
  if (header(headers, 'x-svc-signature-version') !== 'v1') return { ok: false, reason: 'signature version is not v1' };
  if (header(headers, 'x-svc-signature-alg') !== 'hmac-sha256')
    return { ok: false, reason: 'algorithm is not hmac-sha256' };
  const timestamp = header(headers, 'x-svc-timestamp');
  if (timestamp === undefined || !/^(0|[1-9]\d*)$/.test(timestamp))
    return { ok: false, reason: 'timestamp is not canonical decimal seconds' };
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return { ok: false, reason: 'timestamp outside 300 seconds' };
  const signature = header(headers, 'x-svc-signature');
  if (signature === undefined || !/^[0-9a-f]{64}$/.test(signature))
    return { ok: false, reason: 'signature is not lower-case hex SHA-256' };
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(timestamp, 'utf8'), Buffer.from('.', 'utf8'), rawBody]))
    .digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return { ok: false, reason: 'signature mismatch' };
  return { ok: true, event: JSON.parse(rawBody.toString('utf8')) as Record<string, unknown> };
}

/** The legacy check: hex HMAC-SHA256 of the body under the server-held key (known to the tests only). */
export function verifyLegacy(headers: IncomingHttpHeaders, rawBody: Buffer, legacyKey: Buffer): boolean {
  const signature = header(headers, 'x-svc-signature') ?? '';
  const expected = createHmac('sha256', legacyKey).update(rawBody).digest('hex');
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}

const envelopeAjv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(envelopeAjv);

/** Checks an event body against the envelope schema the OpenAPI document publishes for its type. */
export function expectPublishedShape(event: { type: string }): void {
  const valid = envelopeAjv.validate(EVENT_ENVELOPE_SCHEMAS[event.type as EventType], event);
  expect(valid, `${event.type}: ${envelopeAjv.errorsText()}`).toBe(true);
}

// ---------------------------------------------------------------------------------------------
// Events, workers and deliveries

/** An event of `type` about a new visit, as the outbox records it. */
function testEvent(type: EventType, extra: Record<string, unknown>): NewEvent {
  return {
    type,
    occurredAt: new Date(),
    resourceId: newId('visit'),
    data: { clientTicketNumber: `T-${randomUUID().slice(0, 8)}`, clientSiteId: 'SITE-1', status: 'New', ...extra },
  };
}

/** Records an event of the tenant in a transaction of its own (the workers are woken by a notify inside it). */
export async function recordTestEvent(
  t: TestApp,
  tenantId: string,
  type: EventType = 'ticket.created',
  extra: Record<string, unknown> = {},
) {
  return t.database.db.transaction().execute((tx) => recordEvent(tx, tenantId, testEvent(type, extra)));
}

/**
 * Records a ticket.created event of the tenant as a visit create does: in a transaction opened by
 * db/transaction.ts's `transaction()`, which wakes the workers after its commit.
 */
export async function recordTicketCreated(t: TestApp, tenantId: string) {
  return transaction(t.database.db, tenantId, (tx) => recordEvent(tx, tenantId, testEvent('ticket.created', {})));
}

/** Delivery settings small enough for tests: short waits, a short lease, a small budget. */
export function testWebhookConfig(receiverPort: number, overrides: Partial<WebhookConfig> = {}): WebhookConfig {
  return {
    maxAttempts: 3,
    // Generous for a loaded CI machine: an attempt that times out is retried and would skew the counts.
    timeoutMs: 5_000,
    // Retries are due at once, so a drained worker (processAll) leaves nothing pending: tests read settled
    // deliveries instead of waiting for them. The schedule's arithmetic is unit-tested (tests/unit/webhooks).
    retryScheduleMs: [0],
    testAllowedDestinations: [`localhost:${receiverPort}`],
    leaseMs: 10_000,
    pollIntervalMs: 200,
    concurrency: 4,
    autoDisableAfterMs: 0,
    listenerGraceMs: 60_000,
    historyRetentionMs: 0,
    ...overrides,
  };
}

/** localhost is 127.0.0.1 here (the receiver listens there only), whatever the hosts file says. */
export const localResolver: Resolver = async (hostname) => {
  if (hostname === 'localhost') return ['127.0.0.1'];
  throw Object.assign(new Error(`${hostname} is unknown to the test resolver`), { code: 'ENOTFOUND' });
};

export interface TestWorkerOptions {
  config?: Partial<WebhookConfig>;
  /** Another handle on the same database (a second process's pool). */
  database?: AppDatabase;
  deps?: Partial<DeliveryWorkerDeps>;
}

/**
 * A worker on the test app's database, not started: the test drives it with `processAll()`, which claims and
 * delivers until nothing is due. It serves every delivery in that database (the file's own), so a test that
 * starts a worker leaves nothing due and no worker running for the next test.
 */
export function createTestWorker(
  t: TestApp,
  receiver: Pick<TestReceiver, 'caPem'>,
  options: TestWorkerOptions = {},
): DeliveryWorker {
  const deps = {
    database: options.database ?? t.database,
    config: { ...t.config.webhook, ...options.config },
    keys: t.keys,
    logger: t.logger,
    metrics: t.metrics,
    clock: systemClock,
    resolver: localResolver,
    extraCa: [receiver.caPem],
    ...options.deps,
  };
  return new DeliveryWorker({ ...deps, listeners: deps.listeners ?? new ListenerRelay(deps) });
}

/** A started worker (woken on commit and by its timers), for tests of the worker's own waking. */
export async function startTestWorker(
  t: TestApp,
  receiver: Pick<TestReceiver, 'caPem'>,
  options: TestWorkerOptions = {},
): Promise<DeliveryWorker> {
  const worker = createTestWorker(t, receiver, options);
  await worker.start();
  return worker;
}

/** A second handle on the test database, as a second process would have (PGlite: the same instance). */
export function secondDatabaseHandle(t: TestApp): { database: AppDatabase; close(): Promise<void> } {
  const url = databaseUrlOf(t.database);
  if (!url) return { database: t.database, close: async () => undefined };
  const database = openPostgres(url, 5);
  return { database, close: () => database.close() };
}

/** Polls the operator API until the event's deliveries satisfy `done` (no fixed sleeps). */
export async function waitForDeliveries(
  t: TestApp,
  eventId: string,
  done: (deliveries: any[]) => boolean,
  timeoutMs = 60_000,
): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await t.http.get('/admin/v1/deliveries', { token: t.adminToken, query: { eventId } });
    if (response.status !== 200) throw new Error(`deliveries: ${response.status} ${response.text}`);
    if (done(response.body.data)) return response.body.data;
    if (Date.now() > deadline)
      throw new Error(`deliveries of ${eventId} did not settle: ${JSON.stringify(response.body.data)}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

export const settled = (deliveries: any[]) =>
  deliveries.length > 0 && deliveries.every((delivery) => delivery.status !== 'pending');

/** The operator API's deliveries matching `query` (eventId, tenantId, …), read once. */
export async function readDeliveries(t: TestApp, query: Record<string, string>): Promise<any[]> {
  const response = await t.http.get('/admin/v1/deliveries', { token: t.adminToken, query });
  if (response.status !== 200) throw new Error(`deliveries: ${response.status} ${response.text}`);
  return response.body.data;
}

/**
 * Drains the worker (processAll: claims and delivers until nothing is due), then reads the event's
 * deliveries once; each must have settled.
 */
export async function deliveredNow(t: TestApp, worker: DeliveryWorker, eventId: string): Promise<any[]> {
  await worker.processAll();
  const deliveries = await readDeliveries(t, { eventId });
  expect(settled(deliveries), `deliveries of ${eventId}: ${JSON.stringify(deliveries)}`).toBe(true);
  return deliveries;
}

/**
 * A delivery whose worker died during its first attempt (the lease ran out and the attempt was logged lost),
 * delivered by the second: what any worker that takes it over must leave.
 */
export const DELIVERED_AFTER_LOST_ATTEMPT = {
  status: 'succeeded',
  attempts: 2,
  attemptLog: [
    { attempt: 1, statusCode: null, error: "no outcome recorded: the worker's lease expired", durationMs: null },
    { attempt: 2, statusCode: 200, error: null },
  ],
};

/** A test app delivering to a local HTTPS receiver through its own worker. */
export interface DeliveryHarness {
  receiver: TestReceiver;
  t: TestApp;
  worker: DeliveryWorker;
  /** A tenant with a site, project and item (helpers/visits.ts) whose events this harness's worker delivers. */
  visitTenant(options?: Parameters<typeof visitTenant>[1]): Promise<VisitTenant>;
  close(): Promise<void>;
}

/**
 * `started: false` leaves the worker to the test's `processAll()` calls; by default it runs on its own
 * (woken on commit), and `processAll()` still drains it.
 */
export async function startDeliveryHarness(
  options: TestAppOptions = {},
  { started = true }: { started?: boolean } = {},
): Promise<DeliveryHarness> {
  const receiver = await TestReceiver.start();
  const t = await startTestApp({
    ...options,
    config: { webhook: testWebhookConfig(receiver.port), ...options.config },
    resolver: localResolver,
  });
  const worker = createTestWorker(t, receiver);
  if (started) await worker.start();
  return {
    receiver,
    t,
    worker,
    visitTenant: (options) => visitTenant(t, options),
    async close() {
      await worker.stop();
      await t.close();
      await receiver.close();
    },
  };
}
