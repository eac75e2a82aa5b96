/**
 * kill -9 of a delivery worker mid-delivery. Two worker processes (ROLE=worker) deliver the events of
 * site-visit creates made through an API process; while the receiver holds requests open, one worker at a
 * time is killed with SIGKILL and replaced. Its leases run out and the deliveries are claimed again:
 * every event reaches the receiver, a repeat carries the same event id (header and body), and no
 * delivery exceeds the attempt budget.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Endpoint } from '../helpers/webhooks.js';
import { reportFigure, scaled } from './lib/figures.js';
import type { Service } from './lib/service.js';
import { until } from './lib/service.js';
import { type WebhookStage, webhookStage } from './lib/webhook-stage.js';

const EVENTS = scaled(200, 1000);
const KILLS = scaled(3, 10);
const MAX_ATTEMPTS = 8;

let w: WebhookStage;
let endpoint: Endpoint;
let inflight = 0;
beforeAll(async () => {
  w = await webhookStage('worker-kill', {
    WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    WEBHOOK_LEASE_MS: '2000',
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_RETRY_SCHEDULE: '100ms',
    WEBHOOK_POLL_INTERVAL_MS: '200',
    WEBHOOK_CONCURRENCY: '8',
  });
  // Each request is held a little, so that a kill lands while deliveries are in flight.
  endpoint = w.receiver.endpoint(async () => {
    inflight++;
    await new Promise((resolve) => setTimeout(resolve, 100));
    inflight--;
    return 200;
  });
  await w.subscribe(endpoint);
});
afterAll(async () => w?.close());

/** What a timeout reports: the receiver's count, the queue by status, and the workers' last output. */
function progress(what: string, workers: Service[] = []) {
  return async () => {
    const rows = await w.stage.rows(
      'select status, count(*)::int as n, max(attempts) as attempts from webhook_deliveries group by status',
    );
    return `${what} (received ${endpoint.requests.length}, deliveries ${JSON.stringify(rows)}, workers: ${workers.map((each) => each.output().slice(-1500)).join('\n')})`;
  };
}

it(`delivers all ${EVENTS} events through ${KILLS} worker kills`, { timeout: 240_000 }, async () => {
  // The events first (a backlog), then the workers, so that the kills land while deliveries run.
  const visitIds = await w.produceEvents(EVENTS);
  expect(visitIds).toHaveLength(EVENTS);
  const workers: Array<Promise<Service>> = [w.stage.startWorker(w.workerEnv), w.stage.startWorker(w.workerEnv)];
  let killedMidDelivery = 0;
  for (let kill = 0; kill < KILLS; kill++) {
    const threshold = Math.floor(((kill + 1) * EVENTS) / (KILLS + 1));
    const victim = await workers[kill % 2]!;
    await until(
      () => endpoint.requests.length >= threshold && inflight > 0,
      progress(`request ${threshold} in flight`, [victim]),
      120_000,
    );
    if (inflight > 0) killedMidDelivery++;
    const exited = new Promise((resolve) => victim.child.once('exit', resolve));
    victim.child.kill('SIGKILL');
    await exited;
    // The replacement starts in the background; the other worker keeps delivering meanwhile.
    workers[kill % 2] = w.stage.startWorker(w.workerEnv);
  }
  await Promise.all(workers);

  const distinct = () => new Set(endpoint.requests.map((request) => request.headers['x-svc-event-id'])).size;
  await until(() => distinct() >= EVENTS, `all ${EVENTS} events at the receiver (got ${distinct()})`, 120_000);
  await until(
    async () =>
      (await w.stage.countRows(`select count(*)::int as n from webhook_deliveries where status = 'succeeded'`)) ===
      EVENTS,
    'every delivery recorded as succeeded',
    60_000,
  );

  // Every visit's event arrived; repeats carry the same event id in header and body.
  const byEvent = new Map<string, Array<{ attempt: number; bodyId: string; resourceId: string }>>();
  for (const request of endpoint.requests) {
    const body = JSON.parse(request.body.toString('utf8')) as { id: string; resourceId: string };
    const eventId = request.headers['x-svc-event-id'] as string;
    expect(body.id).toBe(eventId);
    byEvent.set(eventId, [
      ...(byEvent.get(eventId) ?? []),
      { attempt: Number(request.headers['x-svc-attempt']), bodyId: body.id, resourceId: body.resourceId },
    ]);
  }
  expect(new Set([...byEvent.values()].map((receipts) => receipts[0]!.resourceId))).toEqual(new Set(visitIds));
  const repeats = [...byEvent.values()].filter((receipts) => receipts.length > 1);
  for (const receipts of repeats) expect(new Set(receipts.map((receipt) => receipt.resourceId)).size).toBe(1);
  const maxAttemptSeen = Math.max(...endpoint.requests.map((request) => Number(request.headers['x-svc-attempt'])));
  const maxAttemptRecorded = await w.stage.countRows('select max(attempts)::int as n from webhook_deliveries');
  expect(maxAttemptSeen).toBeLessThanOrEqual(MAX_ATTEMPTS);
  expect(maxAttemptRecorded).toBeLessThanOrEqual(MAX_ATTEMPTS);

  reportFigure(
    'worker-kill',
    `${byEvent.size}/${EVENTS} events delivered through ${KILLS} kill -9 (${killedMidDelivery} mid-delivery), ` +
      `${endpoint.requests.length - byEvent.size} repeats on ${repeats.length} events (all same event id), max attempt ${Math.max(maxAttemptSeen, maxAttemptRecorded)}/${MAX_ATTEMPTS}`,
  );
});
