/**
 * Receiver outage: the receiver refuses connections, then answers 500, then hangs (timeouts), then comes
 * back. A worker process with a short schedule (3 attempts) delivers the events of site-visit creates.
 * The events of the outage's start live through all three failures and end terminally failed with each
 * failure recorded in their attempt log; the operator retries them (POST /admin/v1/deliveries/{id}/retry)
 * once the receiver is back and they are delivered. Events created during the timeouts are delivered
 * by the automatic retry. Every event reaches the receiver.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DeliveryAttempt } from '../../src/db/schema.js';
import type { Endpoint } from '../helpers/webhooks.js';
import { reportFigure, scaled } from './lib/figures.js';
import { until } from './lib/service.js';
import { type WebhookStage, webhookStage } from './lib/webhook-stage.js';

const EARLY = scaled(20, 200);
const DURING = scaled(10, 100);
const MAX_ATTEMPTS = 3;

let w: WebhookStage;
let endpoint: Endpoint;
let answer: 500 | 'hang' | 200 = 500;
beforeAll(async () => {
  w = await webhookStage('receiver-outage', {
    WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    // Waits (±20%) well above the spread of one round, and every delivery in flight at once, so that each
    // round of attempts meets exactly one phase.
    WEBHOOK_RETRY_SCHEDULE: `${scaled(3, 5)}s`,
    WEBHOOK_CONCURRENCY: String(EARLY + DURING),
    // Long enough that a 500 from a receiver on a loaded machine is still a 500, not a timeout.
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_MS: '3000',
    WEBHOOK_POLL_INTERVAL_MS: '200',
  });
  endpoint = w.receiver.endpoint(() => answer);
  await w.subscribe(endpoint);
});
afterAll(async () => w?.close());

interface Row {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  attempt_log: DeliveryAttempt[];
}

it('delivers every event after refused, 500 and timeout phases; terminal failures retried by the operator', {
  timeout: 180_000,
}, async () => {
  const rows = () => w.stage.rows<Row>('select id, event_id, status, attempts, attempt_log from webhook_deliveries');
  const logged = async (ids: Set<string>, count: number) =>
    (await rows()).filter((row) => ids.has(row.event_id) && row.attempt_log.length >= count).length === ids.size;
  const eventIdsOf = async (visitIds: string[]) =>
    new Set(
      (
        await w.stage.rows<{ id: string }>(
          `select id from events where resource_id in (${visitIds.map((id) => `'${id}'`).join(',')})`,
        )
      ).map((row) => row.id),
    );
  const phase = (what: string) => async () =>
    `${what}: ${JSON.stringify((await rows()).map((row) => [row.status, row.attempt_log.length]))}`;

  // 1. Refused: the receiver is not there at all.
  await w.front.setMode('refuse');
  const early = await eventIdsOf(await w.produceEvents(EARLY));
  await w.stage.startWorker(w.workerEnv);
  await until(() => logged(early, 1), phase('first attempts refused'), 60_000);
  // 2. Back on the network but failing: 500 for every request.
  await w.front.setMode('forward');
  await until(() => logged(early, 2), phase('second attempts answered 500'), 60_000);
  // 3. Hanging: requests are accepted and never answered (the attempt timeout ends them).
  answer = 'hang';
  const during = await eventIdsOf(await w.produceEvents(DURING));
  await until(() => logged(early, 3), phase('third attempts timed out'), 60_000);
  await until(() => logged(during, 1), phase('events during the hang attempted'), 60_000);
  // 4. Back: the automatic retries deliver what is still pending; the early events are terminally failed.
  answer = 200;
  await until(
    async () => (await rows()).filter((row) => during.has(row.event_id)).every((row) => row.status === 'succeeded'),
    phase('automatic retries'),
    60_000,
  );
  const failed = (await rows()).filter((row) => early.has(row.event_id));
  expect(failed.map((row) => row.status)).toEqual(failed.map(() => 'failed'));
  let recorded = 0;
  for (const row of failed) {
    expect(row.attempts).toBe(MAX_ATTEMPTS);
    const [refused, serverError, timeout] = row.attempt_log;
    expect(refused!.error ?? '', JSON.stringify(row.attempt_log)).toMatch(/ECONNREFUSED|connect/i);
    expect(serverError!.statusCode).toBe(500);
    expect(timeout!.error ?? '', JSON.stringify(row.attempt_log)).toMatch(/time/i);
    recorded++;
  }
  // 5. The operator retries the terminal ones.
  for (const row of failed) {
    const retried = await w.stage.operator.http.post(`/admin/v1/deliveries/${row.id}/retry`, {
      token: w.stage.operator.adminToken,
    });
    expect(retried.status, retried.text).toBe(202);
  }
  await until(async () => (await rows()).every((row) => row.status === 'succeeded'), phase('operator retries'), 60_000);

  const delivered = new Set(endpoint.requests.map((request) => request.headers['x-svc-event-id'] as string));
  for (const id of [...early, ...during]) expect(delivered.has(id)).toBe(true);
  reportFigure(
    'receiver-outage',
    `${early.size + during.size}/${early.size + during.size} events delivered after refused → 500 → timeout; ${recorded}/${early.size} terminal failures with all 3 failures recorded, ` +
      `${failed.length}/${early.size} retried via the operator route; ${during.size}/${during.size} delivered by automatic retry`,
  );
});
