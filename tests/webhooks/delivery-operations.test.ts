/**
 * The operator's delivery tools: filters (tenant, status, event type, subscription, time), one delivery
 * with its attempt log, and the bulk retry of failed deliveries matching a filter after a dry-run count.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventType } from '../../src/modules/outbox/types.js';
import type { TestApp } from '../helpers/app.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';
import {
  type DeliveryHarness,
  type Endpoint,
  deliveredNow,
  recordTestEvent,
  startDeliveryHarness,
} from '../helpers/webhooks.js';

let harness: DeliveryHarness;
let t: TestApp;

beforeAll(async () => {
  harness = await startDeliveryHarness({}, { started: false });
  t = harness.t;
});
afterAll(() => harness?.close());

async function subscribe(token: string, endpoint: Endpoint, eventTypes: EventType[]) {
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token,
    json: { targetUrl: endpoint.url, eventTypes, secret: `whsec-${randomUUID()}` },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id as string;
}

async function deliveries(query: Record<string, string>) {
  const response = await admin(t, 'GET', `/admin/v1/deliveries?${new URLSearchParams(query)}`);
  expect(response.status, response.text).toBe(200);
  return response.body.data as any[];
}

async function settle(eventIds: string[]) {
  for (const eventId of eventIds) await deliveredNow(t, harness.worker, eventId);
}

describe('operator delivery tools', () => {
  it('filters, shows one delivery, and retries the failed ones matching a filter after a dry-run count', async () => {
    const failing = harness.receiver.endpoint(() => 500);
    const healthy = harness.receiver.endpoint(() => 204);
    const a = await tenantWithToken(t);
    const b = await tenantWithToken(t);
    const broken = await subscribe(a.token, failing, ['ticket.created', 'job.dispatched']);
    const fine = await subscribe(a.token, healthy, ['ticket.created', 'job.dispatched']);
    await subscribe(b.token, failing, ['ticket.created']);
    const startedAt = new Date(Date.now() - 1_000).toISOString();
    const events = [
      await recordTestEvent(t, a.tenantId, 'ticket.created'),
      await recordTestEvent(t, a.tenantId, 'job.dispatched'),
      await recordTestEvent(t, b.tenantId, 'ticket.created'),
    ];
    await settle(events.map((event) => event.id));

    // Filters combine; each is exact.
    expect(await deliveries({ tenantId: a.tenantId })).toHaveLength(4);
    expect(await deliveries({ tenantId: a.tenantId, status: 'failed' })).toHaveLength(2);
    expect(await deliveries({ tenantId: a.tenantId, status: 'failed', eventType: 'job.dispatched' })).toMatchObject([
      { eventId: events[1]!.id, subscriptionId: broken },
    ]);
    expect((await deliveries({ subscriptionId: fine })).map((delivery) => delivery.status)).toEqual([
      'succeeded',
      'succeeded',
    ]);
    expect(
      await deliveries({ tenantId: a.tenantId, createdFrom: new Date(Date.now() + 60_000).toISOString() }),
    ).toEqual([]);
    expect(
      await deliveries({
        tenantId: a.tenantId,
        createdFrom: startedAt,
        createdBefore: new Date(Date.now() + 60_000).toISOString(),
      }),
    ).toHaveLength(4);
    const ascending = (await deliveries({ tenantId: a.tenantId })).map((delivery) => delivery.deliveryId);
    expect((await deliveries({ tenantId: a.tenantId, order: 'desc' })).map((delivery) => delivery.deliveryId)).toEqual(
      [...ascending].reverse(),
    );
    expect(await deliveries({ tenantId: a.tenantId, order: 'desc', limit: '1' })).toHaveLength(1);

    // The subscriptions' health: the last 24 hours by status and the success rate.
    const health = await admin(t, 'GET', `/admin/v1/tenants/${a.tenantId}/webhook-subscriptions`);
    const byId = new Map(health.body.data.map((subscription: any) => [subscription.id, subscription.health]));
    expect(byId.get(broken)).toMatchObject({
      consecutiveFailures: 6,
      lastSuccessAt: null,
      lastError: 'HTTP 500',
      last24Hours: { succeeded: 0, failed: 2, pending: 0, successRate: 0 },
    });
    expect(byId.get(fine)).toMatchObject({
      consecutiveFailures: 0,
      last24Hours: { succeeded: 2, failed: 0, pending: 0, successRate: 1 },
    });

    // One delivery with its attempt log.
    const [failed] = await deliveries({ tenantId: a.tenantId, status: 'failed', eventType: 'ticket.created' });
    const one = await admin(t, 'GET', `/admin/v1/deliveries/${failed.deliveryId}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ deliveryId: failed.deliveryId, status: 'failed', attempts: 3 });
    expect(one.body.data.attemptLog.map((entry: any) => [entry.attempt, entry.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
    ]);
    expectProblem(await admin(t, 'GET', '/admin/v1/deliveries/dlv_unknown'), 404, 'not-found');

    // Count first: nothing changes.
    const dryRun = await admin(t, 'POST', '/admin/v1/deliveries/retry-failed', { tenantId: a.tenantId, dryRun: true });
    expect(dryRun.status).toBe(200);
    expect(dryRun.body.data).toEqual({ dryRun: true, matched: 2 });
    expect(
      (
        await admin(t, 'POST', '/admin/v1/deliveries/retry-failed', {
          tenantId: a.tenantId,
          eventType: 'job.dispatched',
          dryRun: true,
        })
      ).body.data.matched,
    ).toBe(1);
    expect(await deliveries({ tenantId: a.tenantId, status: 'failed' })).toHaveLength(2);

    // Then retry the same filter: tenant A's two reopen and succeed; tenant B's stays failed.
    failing.respond(() => 200);
    const retried = await admin(t, 'POST', '/admin/v1/deliveries/retry-failed', { tenantId: a.tenantId });
    expect(retried.status).toBe(202);
    expect(retried.body.data).toEqual({ dryRun: false, matched: 2 });
    await settle(events.slice(0, 2).map((event) => event.id));
    expect((await deliveries({ tenantId: a.tenantId })).map((delivery) => delivery.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    const reopened = (await deliveries({ tenantId: a.tenantId, subscriptionId: broken }))[0];
    expect(reopened.attemptLog.map((entry: any) => entry.attempt)).toEqual([1, 2, 3, 4]);
    expect(await deliveries({ tenantId: b.tenantId, status: 'failed' })).toHaveLength(1);
    expect((await admin(t, 'POST', '/admin/v1/deliveries/retry-failed', { tenantId: a.tenantId })).body.data).toEqual({
      dryRun: false,
      matched: 0,
    });
  });

  it('pages the list with after: every record once, in either order, with the filters kept', async () => {
    const { tenantId, token } = await tenantWithToken(t);
    await subscribe(
      token,
      harness.receiver.endpoint(() => 204),
      ['ticket.created'],
    );
    await subscribe(
      token,
      harness.receiver.endpoint(() => 204),
      ['ticket.created'],
    );
    for (let index = 0; index < 4; index++) await recordTestEvent(t, tenantId, 'ticket.created');
    const all = (await deliveries({ tenantId })).map((delivery) => delivery.deliveryId);
    expect(all).toHaveLength(8);
    for (const order of ['asc', 'desc'] as const) {
      const expected = order === 'asc' ? all : [...all].reverse();
      const paged: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await deliveries({ tenantId, order, limit: '3', ...(after ? { after } : {}) });
        paged.push(...page.map((delivery) => delivery.deliveryId));
        if (page.length < 3) break;
        after = page.at(-1).deliveryId;
      }
      expect(paged).toEqual(expected);
    }
    // The page after the last record is empty; an id that names no delivery is refused, not an empty page.
    expect(await deliveries({ tenantId, after: all.at(-1)! })).toEqual([]);
    expectInvalid(await admin(t, 'GET', '/admin/v1/deliveries?after=dlv_nothing'), ['after']);
  });

  it('refuses bad filters', async () => {
    expectInvalid(await admin(t, 'GET', '/admin/v1/deliveries?createdFrom=yesterday'), ['createdFrom']);
    expectInvalid(await admin(t, 'GET', '/admin/v1/deliveries?eventType=job.exploded'), ['eventType']);
    expectInvalid(await admin(t, 'POST', '/admin/v1/deliveries/retry-failed', { status: 'pending' }), ['status']);
    expectProblem(
      await t.http.post('/admin/v1/deliveries/retry-failed', { json: { dryRun: true } }),
      401,
      'unauthorized',
    );
  });
});
