/**
 * Operational visibility: GET /metrics (Prometheus text, behind the operator token; and on a listener of
 * its own for METRICS_PORT), and logs that let an operator follow one event from the request that
 * recorded it to its last delivery attempt (an injected logger captures the lines).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepared } from '../../src/db/prepared-statements.js';
import { runInTurnBatch } from '../../src/db/turn-batches.js';
import { registrySource, startMetricsServer } from '../../src/runtime/metrics.js';
import type { TestApp } from '../helpers/app.js';
import { capturedLog } from '../helpers/log-lines.js';
import { expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';
import { createVisit, visitBody, visitTenant, type VisitTenant } from '../helpers/visits.js';
import { type DeliveryHarness, deliveredNow, type Endpoint, startDeliveryHarness } from '../helpers/webhooks.js';

/** Every line the app and its worker log, parsed. */
const log = capturedLog('info');
const { lines } = log;

let harness: DeliveryHarness;
let t: TestApp;

beforeAll(async () => {
  // Driven by processAll (deliveredNow): a delivery stays due until a test drains the queue.
  harness = await startDeliveryHarness({ logger: log.logger }, { started: false });
  t = harness.t;
});
afterAll(() => harness?.close());

async function subscribe(v: VisitTenant, endpoint: Endpoint) {
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: v.fullToken,
    json: { targetUrl: endpoint.url, eventTypes: ['ticket.created'], secret: `whsec-${randomUUID()}` },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id as string;
}

async function scrape(): Promise<string> {
  const response = await t.http.get('/metrics', { token: t.adminToken });
  expect(response.status).toBe(200);
  expect(response.contentType).toMatch(/^text\/plain/);
  return response.text;
}

/** The value of one sample, by its name and labels as printed (e.g. `{outcome="replayed"}`), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('GET /metrics', () => {
  it('needs the operator token', async () => {
    expectProblem(await t.http.get('/metrics'), 401, 'unauthorized');
    expectProblem(await t.http.get('/metrics', { token: 'not-the-operator-token' }), 401, 'unauthorized');
  });

  it('counts requests by route template, method and status, with latency histograms', async () => {
    const v = await tenantWithToken(t);
    for (let index = 0; index < 3; index++)
      expect((await t.http.get('/api/v1/sites', { token: v.token })).status).toBe(200);
    expect((await t.http.get('/api/v1/no-such-thing', { token: v.token })).status).toBe(404);
    const text = await scrape();
    expect(
      sample(text, 'http_requests_total', '{method="GET",route="/api/v1/sites",status="200"}'),
    ).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'http_requests_total', '{method="GET",route="unmatched",status="404"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(
      sample(text, 'http_request_duration_seconds_count', '{method="GET",route="/api/v1/sites",status="200"}'),
    ).toBeGreaterThanOrEqual(3);
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.05",method="GET",route="/api/v1/sites",status="200"}',
    );
  });

  it('counts idempotent replays and conflicts', async () => {
    const before = await scrape();
    const v = await tenantWithToken(t);
    const headers = { 'idempotency-key': `key-${randomUUID()}` };
    const body = siteBody();
    expect((await t.http.post('/api/v1/sites', { token: v.token, json: body, headers })).status).toBe(201);
    const replay = await t.http.post('/api/v1/sites', { token: v.token, json: body, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectProblem(
      await t.http.post('/api/v1/sites', { token: v.token, json: { ...body, name: 'Another' }, headers }),
      409,
      'idempotency-conflict',
    );
    const after = await scrape();
    const delta = (outcome: string) =>
      sample(after, 'idempotency_requests_total', `{outcome="${outcome}"}`)! -
      sample(before, 'idempotency_requests_total', `{outcome="${outcome}"}`)!;
    expect(delta('replayed')).toBe(1);
    expect(delta('conflict')).toBe(1);
  });

  it('counts the batches of statements sent together on PostgreSQL, and their statements', async () => {
    const before = await scrape();
    // Four one-statement writes of one turn, through the app's own database: a batch by construction (requests
    // over sockets may reach a loaded event loop in different turns; tests/sites/create-batches.test.ts sends
    // creates at once and checks their answers, tests/db/turn-batches.test.ts the batching itself).
    const written = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        runInTurnBatch(t.database.db, sql<{ n: number }>`select ${n}::int as n ${prepared()}`, undefined),
      ),
    );
    expect(written.map((rows) => rows[0]!.n)).toEqual([1, 2, 3, 4]);
    const after = await scrape();
    if (t.database.kind !== 'postgres') {
      expect(sample(after, 'db_statement_batches_total')).toBeUndefined();
      return;
    }
    const delta = (name: string) => sample(after, name)! - sample(before, name)!;
    expect(delta('db_statement_batches_total')).toBeGreaterThanOrEqual(1);
    expect(delta('db_batched_statements_total')).toBeGreaterThanOrEqual(4);
    expect(delta('db_statement_batches_failed_total')).toBe(0);
  });

  it("counts delivery attempts by outcome and reports the due deliveries and the oldest one's age", async () => {
    const v = await harness.visitTenant();
    const endpoint = harness.receiver.endpoint((_request, index) => (index === 0 ? 500 : 204));
    await subscribe(v, endpoint);
    const before = await scrape();
    const visit = await createVisit(t, v);
    const [delivery] = await t.http
      .get('/admin/v1/deliveries', { token: t.adminToken, query: { tenantId: v.tenantId } })
      .then((response) => response.body.data as { eventId: string }[]);
    await deliveredNow(t, harness.worker, delivery!.eventId);
    const after = await scrape();
    const delta = (outcome: string) =>
      sample(after, 'webhook_delivery_attempts_total', `{outcome="${outcome}"}`)! -
      sample(before, 'webhook_delivery_attempts_total', `{outcome="${outcome}"}`)!;
    expect(delta('retry_scheduled')).toBe(1);
    expect(delta('succeeded')).toBe(1);
    expect(delta('failed')).toBe(0);
    expect(visit.id).toMatch(/^visit_/);

    // A delivery not drained yet stays due, and is counted.
    const idle = await visitTenant(t);
    await subscribe(idle, harness.receiver.endpoint());
    await createVisit(t, idle);
    const waiting = await scrape();
    expect(sample(waiting, 'webhook_deliveries_due')).toBeGreaterThanOrEqual(1);
    expect(sample(waiting, 'webhook_oldest_due_delivery_age_seconds')).toBeGreaterThanOrEqual(0);
    if (t.database.kind === 'postgres') {
      expect(sample(waiting, 'db_pool_connections', '{state="total"}')).toBeGreaterThanOrEqual(1);
      expect(sample(waiting, 'db_pool_max_connections')).toBeGreaterThanOrEqual(1);
      // Nothing else runs: the scrape's own query (webhook_deliveries_due) is not a client waiting for a connection.
      expect(sample(waiting, 'db_pool_connections', '{state="waiting"}')).toBe(0);
    }
  });

  it('is served without a token on a listener of its own (METRICS_PORT)', async () => {
    const server = await startMetricsServer(registrySource(t.metrics.registry), 0, '127.0.0.1');
    try {
      const address = server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${address.port}/metrics`);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('# TYPE http_requests_total counter');
      expect((await fetch(`http://127.0.0.1:${address.port}/other`)).status).toBe(404);
    } finally {
      server.close();
    }
  });
});

describe('log correlation', () => {
  it('follows one event from the request that recorded it to its last attempt', async () => {
    const v = await harness.visitTenant();
    const endpoint = harness.receiver.endpoint((_request, index) => (index === 0 ? 503 : 200));
    const subscriptionId = await subscribe(v, endpoint);
    const requestId = `trace-${randomUUID()}`;
    const created = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      headers: { 'x-request-id': requestId },
      json: visitBody(v),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe(requestId);

    // The request's lines: its id, the tenant, and the event it recorded.
    const recorded = lines.find((line) => line.msg === 'event recorded' && line.requestId === requestId);
    expect(recorded).toMatchObject({
      tenantId: v.tenantId,
      eventType: 'ticket.created',
      resourceId: created.body.data.id,
      deliveries: 1,
    });
    const eventId: string = recorded!.eventId;
    const [delivery] = await deliveredNow(t, harness.worker, eventId);
    expect(delivery.status).toBe('succeeded');
    const completed = lines.find((line) => line.requestId === requestId && line.msg === 'request completed');
    expect(completed).toMatchObject({ tenantId: v.tenantId, res: { statusCode: 201 } });

    // The worker's lines: every attempt names the tenant, event, delivery, subscription and attempt number.
    const attempts = lines.filter((line) => line.eventId === eventId && line.attempt !== undefined);
    expect(attempts.map((line) => [line.attempt, line.msg])).toEqual([
      [1, 'webhook attempt failed'],
      [2, 'webhook delivered'],
    ]);
    for (const line of attempts)
      expect(line).toMatchObject({ tenantId: v.tenantId, deliveryId: delivery.deliveryId, subscriptionId });
    expect(attempts[0]).toMatchObject({ statusCode: 503 });
  });

  it('operator requests about a tenant carry its id', async () => {
    const v = await tenantWithToken(t);
    const requestId = `trace-${randomUUID()}`;
    const response = await t.http.get(`/admin/v1/tenants/${v.tenantId}`, {
      token: t.adminToken,
      headers: { 'x-request-id': requestId },
    });
    expect(response.status).toBe(200);
    expect(lines.find((line) => line.requestId === requestId && line.msg === 'request completed')).toMatchObject({
      tenantId: v.tenantId,
    });
  });
});
