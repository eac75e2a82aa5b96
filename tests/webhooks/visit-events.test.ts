/**
 * Site-visit events end to end, through the real HTTP paths that produce them: client and operator
 * creates, and every operator workflow action, delivered to a real HTTPS receiver and verified there by
 * the independent v1 verifier. One event gives one delivery per matching active subscription; lifecycle
 * events other than ticket.created are published only while the tenant's webhookAccess and apiEnabled
 * are both on.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEventsOfResource } from '../../src/modules/outbox/repository/events.js';
import { toEnvelope } from '../../src/modules/outbox/service.js';
import { EVENT_TYPES, type EventType } from '../../src/modules/outbox/types.js';
import type { TestApp } from '../helpers/app.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, operatorCreateVisit, visitBody, type VisitTenant, workflowAction } from '../helpers/visits.js';
import {
  type DeliveryHarness,
  type Endpoint,
  expectPublishedShape,
  type ReceivedRequest,
  settled,
  startDeliveryHarness,
  type TestReceiver,
  verifyV1,
} from '../helpers/webhooks.js';

let harness: DeliveryHarness;
let receiver: TestReceiver;
let t: TestApp;

beforeAll(async () => {
  harness = await startDeliveryHarness({}, { started: false });
  ({ receiver, t } = harness);
});
afterAll(() => harness?.close());

const ALL_TYPES: EventType[] = [...EVENT_TYPES];

/** A v1 subscription of the tenant to a fresh endpoint; the secret is what the receiver verifies with. */
async function subscribe(v: VisitTenant, eventTypes: EventType[] = ALL_TYPES) {
  const endpoint = receiver.endpoint();
  const secret = `whsec ${randomUUID()} ✓`;
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: v.fullToken,
    json: { targetUrl: endpoint.url, eventTypes, secret },
  });
  expect(created.status, created.text).toBe(201);
  return { endpoint, secret, id: created.body.data.id as string };
}

/** What a receiver does: verify the v1 signature and the headers, then parse and check the published schema. */
function receive(request: ReceivedRequest, secret: string) {
  const verified = verifyV1(request.headers, request.body, secret);
  expect(verified, JSON.stringify(verified)).toMatchObject({ ok: true });
  const event = (verified as { event: Record<string, any> }).event;
  expect(request.headers['x-svc-event-id']).toBe(event.id);
  expect(request.headers['x-svc-event-type']).toBe(event.type);
  expectPublishedShape(event as { type: string });
  return event;
}

async function deliveriesOf(tenantId: string): Promise<any[]> {
  const response = await t.http.get('/admin/v1/deliveries', { token: t.adminToken, query: { tenantId } });
  expect(response.status).toBe(200);
  return response.body.data;
}

/** Every request at the endpoint after the worker has drained the queue (processAll): `count` of them, all settled. */
async function settledRequests(endpoint: Endpoint, count: number, tenantId: string): Promise<ReceivedRequest[]> {
  await harness.worker.processAll();
  const deliveries = await deliveriesOf(tenantId);
  expect(settled(deliveries), JSON.stringify(deliveries)).toBe(true);
  expect(endpoint.requests).toHaveLength(count);
  return endpoint.requests;
}

describe('ticket.created through the client API', () => {
  it('delivers exactly one signed event per matching subscription; an idempotent replay delivers nothing', async () => {
    const v = await harness.visitTenant();
    const first = await subscribe(v, ['ticket.created']);
    const body = visitBody(v, { clientTicketNumber: 'E2E-1' });
    const headers = { 'idempotency-key': `create-${randomUUID()}` };
    const created = await t.http.post('/api/v1/site-visits', { token: v.token, json: body, headers });
    expect(created.status).toBe(201);
    const visit = created.body.data;

    const [request] = await settledRequests(first.endpoint, 1, v.tenantId);
    const event = receive(request!, first.secret);
    const [stored] = await listEventsOfResource(t.database.db, v.tenantId, visit.id);
    expect(event).toEqual(JSON.parse(JSON.stringify(toEnvelope(stored!))));
    expect(event).toMatchObject({
      type: 'ticket.created',
      resourceType: 'site-visits',
      resourceId: visit.id,
      occurredAt: visit.attributes.createdAt,
      data: { clientTicketNumber: 'E2E-1', clientSiteId: v.siteCode, status: 'New' },
    });
    expect(request!.headers['x-svc-attempt']).toBe('1');

    // The replay answers the original response and records nothing: no event, no delivery.
    const replay = await t.http.post('/api/v1/site-visits', { token: v.token, json: body, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.id).toBe(visit.id);
    expect(await deliveriesOf(v.tenantId)).toHaveLength(1);

    // A second subscription: the next visit is delivered once to each, under one event id.
    const second = await subscribe(v, ['ticket.created', 'job.dispatched']);
    const next = await createVisit(t, v, { clientTicketNumber: 'E2E-2' });
    const [again] = await settledRequests(second.endpoint, 1, v.tenantId);
    const [firstAgain] = (await settledRequests(first.endpoint, 2, v.tenantId)).slice(1);
    const [a, b] = [receive(firstAgain!, first.secret), receive(again!, second.secret)];
    expect(a).toEqual(b);
    expect(a).toMatchObject({ resourceId: next.id, data: { clientTicketNumber: 'E2E-2' } });
    expect(firstAgain!.headers['x-svc-delivery-id']).not.toBe(again!.headers['x-svc-delivery-id']);
    // The first subscription's secret does not verify the second's delivery.
    expect(verifyV1(again!.headers, again!.body, first.secret)).toEqual({ ok: false, reason: 'signature mismatch' });

    const deliveries = await deliveriesOf(v.tenantId);
    expect(deliveries.map((delivery) => [delivery.eventType, delivery.subscriptionId, delivery.status])).toEqual([
      ['ticket.created', first.id, 'succeeded'],
      ['ticket.created', first.id, 'succeeded'],
      ['ticket.created', second.id, 'succeeded'],
    ]);
  });
});

describe('ticket.created through the operator API', () => {
  it('delivers the operator-created visit once, with its visit_ id', async () => {
    const v = await harness.visitTenant();
    const { endpoint, secret } = await subscribe(v);
    const created = await operatorCreateVisit(t, v, { clientTicketNumber: 'OP-E2E' });
    expect(created.status).toBe(201);
    const [request] = await settledRequests(endpoint, 1, v.tenantId);
    expect(receive(request!, secret)).toMatchObject({
      type: 'ticket.created',
      resourceId: created.body.data.id,
      data: { clientTicketNumber: 'OP-E2E', clientSiteId: v.siteCode, status: 'New' },
    });
    expect(await deliveriesOf(v.tenantId)).toHaveLength(1);
  });
});

describe("the workflow's events", () => {
  it("delivers every action's event with its data and the status after it", async () => {
    const v = await harness.visitTenant();
    const { endpoint, secret } = await subscribe(v);
    const visit = await createVisit(t, v, { clientTicketNumber: 'FLOW-1' });
    const common = { clientTicketNumber: 'FLOW-1', clientSiteId: v.siteCode };
    const steps: [Record<string, unknown>, EventType, Record<string, unknown>][] = [
      [
        { action: 'assign-rep', fieldRepName: 'Jordan Lee' },
        'rep.assigned',
        { status: 'New', fieldRepName: 'Jordan Lee' },
      ],
      [
        { action: 'schedule', scheduledDate: '2026-12-02', etaTime: '09:30' },
        'job.scheduled',
        { status: 'Scheduled', scheduledDate: '2026-12-02', etaTime: '09:30' },
      ],
      [
        { action: 'schedule', scheduledDate: '2026-12-04' },
        'schedule.updated',
        { status: 'Scheduled', scheduledDate: '2026-12-04', etaTime: null },
      ],
      [
        { action: 'assign-rep', fieldRepName: null },
        'rep.assigned',
        { status: 'Scheduled', fieldRepName: 'Awaiting reassignment' },
      ],
      [{ action: 'dispatch' }, 'job.dispatched', { status: 'Dispatched' }],
      [
        { action: 'transmit-deliverables', notes: 'Site photos.' },
        'deliverables.transmitted',
        { status: 'Dispatched', notes: 'Site photos.' },
      ],
      [{ action: 'complete', qualityReviewPassed: true }, 'job.completed', { status: 'Completed' }],
      [{ action: 'transmit-deliverables' }, 'deliverables.transmitted', { status: 'Completed', notes: null }],
    ];
    for (const [action] of steps) expect((await workflowAction(t, visit.id, action)).status).toBe(200);

    const requests = await settledRequests(endpoint, steps.length + 1, v.tenantId);
    const received = requests.map((request) => receive(request, secret));
    const stored = await listEventsOfResource(t.database.db, v.tenantId, visit.id);
    // Delivery order is not guaranteed: match what arrived to what was recorded, by event id.
    expect(new Set(received.map((event) => event.id))).toEqual(new Set(stored.map((row) => row.id)));
    const byId = new Map(received.map((event) => [event.id, event]));
    const expected = [
      ['ticket.created', { status: 'New' }] as const,
      ...steps.map(([, type, data]) => [type, data] as const),
    ];
    expect(stored.map((row) => byId.get(row.id)).map((event) => [event!.type, event!.data])).toEqual(
      expected.map(([type, data]) => [type, { ...common, ...data }]),
    );
    for (const event of received) expect(event.resourceId).toBe(visit.id);
  });

  it('reaches only the subscriptions whose eventTypes list the type', async () => {
    const v = await harness.visitTenant();
    const dispatchOnly = await subscribe(v, ['job.dispatched']);
    const visit = await createVisit(t, v);
    await workflowAction(t, visit.id, { action: 'schedule', scheduledDate: '2026-12-02' });
    await workflowAction(t, visit.id, { action: 'dispatch' });
    const [request] = await settledRequests(dispatchOnly.endpoint, 1, v.tenantId);
    expect(receive(request!, dispatchOnly.secret)).toMatchObject({
      type: 'job.dispatched',
      data: { status: 'Dispatched' },
    });
    expect((await deliveriesOf(v.tenantId)).map((delivery) => delivery.eventType)).toEqual(['job.dispatched']);
  });
});

describe('publishing rules', () => {
  it('publishes lifecycle events only while webhookAccess and apiEnabled are both on; ticket.created always', async () => {
    const v = await harness.visitTenant();
    const { endpoint, secret } = await subscribe(v);
    const flags = async (patch: Record<string, boolean>) =>
      expect((await admin(t, 'PATCH', `/admin/v1/tenants/${v.tenantId}`, patch)).status).toBe(200);

    await flags({ apiEnabled: false });
    const a = await createVisit(t, v);
    expect((await workflowAction(t, a.id, { action: 'assign-rep', fieldRepName: 'Ana' })).status).toBe(200);
    expect((await workflowAction(t, a.id, { action: 'schedule', scheduledDate: '2026-12-02' })).status).toBe(200);

    await flags({ apiEnabled: true, webhookAccess: false });
    const b = await operatorCreateVisit(t, v);
    expect((await workflowAction(t, a.id, { action: 'dispatch' })).status).toBe(200);

    await flags({ webhookAccess: true });
    expect((await workflowAction(t, a.id, { action: 'complete', qualityReviewPassed: true })).status).toBe(200);

    // The workflow moved the visit regardless; only publishing was held back (and is not replayed later).
    expect((await admin(t, 'GET', `/admin/v1/site-visits/${a.id}`)).body.data.attributes.status).toBe('Completed');
    const requests = await settledRequests(endpoint, 3, v.tenantId);
    const received = requests.map((request) => receive(request, secret));
    expect(received.map((event) => `${event.type} ${event.resourceId}`).sort()).toEqual(
      [`ticket.created ${a.id}`, `ticket.created ${b.body.data.id}`, `job.completed ${a.id}`].sort(),
    );
    expect((await deliveriesOf(v.tenantId)).map((delivery) => delivery.eventType).sort()).toEqual([
      'job.completed',
      'ticket.created',
      'ticket.created',
    ]);
    // Every event was recorded all the same (the outbox keeps them; publishing is what the flags gate).
    expect((await listEventsOfResource(t.database.db, v.tenantId, a.id)).map((row) => row.type)).toEqual([
      'ticket.created',
      'rep.assigned',
      'job.scheduled',
      'job.dispatched',
      'job.completed',
    ]);
  });

  it('sends nothing to a deactivated subscription, and nothing missed once it is reactivated', async () => {
    const v = await harness.visitTenant();
    const stays = await subscribe(v);
    const paused = await subscribe(v);
    const off = await t.http.patch(`/api/v1/webhook-subscriptions/${paused.id}`, {
      token: v.fullToken,
      json: { isActive: false },
    });
    expect(off.body.data.isActive).toBe(false);

    const visit = await createVisit(t, v);
    await workflowAction(t, visit.id, { action: 'schedule', scheduledDate: '2026-12-02' });
    await settledRequests(stays.endpoint, 2, v.tenantId);
    expect(paused.endpoint.requests).toEqual([]);

    const on = await t.http.patch(`/api/v1/webhook-subscriptions/${paused.id}`, {
      token: v.fullToken,
      json: { isActive: true },
    });
    expect(on.body.data.isActive).toBe(true);
    await workflowAction(t, visit.id, { action: 'dispatch' });
    const [resumed] = await settledRequests(paused.endpoint, 1, v.tenantId);
    expect(receive(resumed!, paused.secret)).toMatchObject({ type: 'job.dispatched', resourceId: visit.id });
    await settledRequests(stays.endpoint, 3, v.tenantId);
    const bySubscription = (await deliveriesOf(v.tenantId)).filter((delivery) => delivery.subscriptionId === paused.id);
    expect(bySubscription.map((delivery) => delivery.eventType)).toEqual(['job.dispatched']);
  });

  it('publishes nothing for a refused action or one that changed nothing', async () => {
    const v = await harness.visitTenant();
    const { endpoint } = await subscribe(v);
    const visit = await createVisit(t, v);
    expect((await workflowAction(t, visit.id, { action: 'dispatch' })).status).toBe(409);
    expect((await workflowAction(t, visit.id, { action: 'complete', qualityReviewPassed: false })).status).toBe(422);
    expect((await workflowAction(t, visit.id, { action: 'assign-rep', fieldRepName: null })).status).toBe(200);
    await settledRequests(endpoint, 1, v.tenantId);
    expect((await deliveriesOf(v.tenantId)).map((delivery) => delivery.eventType)).toEqual(['ticket.created']);
  });
});
