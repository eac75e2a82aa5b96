/**
 * The statement that records an event queues its deliveries (outbox/repository/events.ts): one per active
 * target subscribed to the type, in the targets' order, each with its own delivery id in lib/ids.ts's form,
 * made by the service for the first few targets and by PostgreSQL past them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';
import {
  localResolver,
  readDeliveries,
  recordTicketCreated,
  TestReceiver,
  testWebhookConfig,
} from '../helpers/webhooks.js';

let receiver: TestReceiver;
let t: TestApp;
beforeAll(async () => {
  receiver = await TestReceiver.start();
  t = await startTestApp({ config: { webhook: testWebhookConfig(receiver.port) }, resolver: localResolver });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

it('queues one delivery per subscribed active target, each with a fresh dlv_ id', async () => {
  const tenant = await tenantWithToken(t);
  const subscriptionIds: string[] = [];
  for (const eventTypes of [['ticket.created'], ['ticket.created', 'job.completed'], ['job.completed']]) {
    const created = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: { targetUrl: receiver.endpoint().url, eventTypes, secret: 'a shared secret, 16+' },
    });
    expect(created.status).toBe(201);
    subscriptionIds.push(created.body.data.id);
  }
  const event = await recordTicketCreated(t, tenant.tenantId);
  const deliveries = await readDeliveries(t, { eventId: event.id });
  expect(deliveries.map((delivery: any) => delivery.subscriptionId).sort()).toEqual(subscriptionIds.slice(0, 2).sort());
  const ids = deliveries.map((delivery: any) => delivery.deliveryId);
  for (const id of ids) expect(id).toMatch(/^dlv_[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
  expect(new Set(ids).size).toBe(ids.length);
});

it('gives every target its own id also past the ids the service makes per event (the rest made in SQL)', async () => {
  const tenant = await tenantWithToken(t);
  const subscriptionIds: string[] = [];
  for (let index = 0; index < 6; index++) {
    const created = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: { targetUrl: receiver.endpoint().url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
    });
    expect(created.status, created.text).toBe(201);
    subscriptionIds.push(created.body.data.id);
  }
  const event = await recordTicketCreated(t, tenant.tenantId);
  const deliveries = await readDeliveries(t, { eventId: event.id });
  expect(deliveries.map((delivery: any) => delivery.subscriptionId).sort()).toEqual([...subscriptionIds].sort());
  const ids = deliveries.map((delivery: any) => delivery.deliveryId);
  for (const id of ids) expect(id).toMatch(/^dlv_[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
  expect(new Set(ids).size).toBe(6);
});
