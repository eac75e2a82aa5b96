/**
 * The documents' examples tell one client's story (src/modules/docs/examples.ts). Each is valid against its
 * schema (document.test.ts); here they also agree with each other as real responses and deliveries would:
 * an upload is a change of its owner (version + 1, `updatedAt` at the upload), every event has its own id
 * (the receiver's deduplication key), ticket.created happened when the visit was created, and a visit's
 * events follow each other in time with the statuses the workflow gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/outbox/types.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let client: any;
let operator: any;

beforeAll(async () => {
  t = await startTestApp();
  client = (await t.http.get('/api/v1/openapi.json')).body;
  operator = (await t.http.get('/admin/v1/openapi.json', { token: t.adminToken })).body;
});
afterAll(async () => t?.close());

const example = (document: any, name: string) => document.components.schemas[name].examples[0];
const events = () => EVENT_TYPES.map((type) => ({ type, event: example(client, webhookSchemaName(type)) }));
function webhookSchemaName(type: string): string {
  return client.webhooks[type].post.requestBody.content['application/json'].schema.$ref.split('/').pop();
}

/** What a resource with uploaded files shows at the least: a version per upload, updated at the last one. */
function expectFilesCounted(resource: any, files: any) {
  const uploads = files.versions as { uploadedAt: string }[];
  expect(resource.meta.version).toBeGreaterThanOrEqual(1 + uploads.length);
  expect(resource.meta.etag).toBe(`"${resource.meta.version}"`);
  expect(Date.parse(resource.attributes.updatedAt)).toBeGreaterThanOrEqual(Date.parse(uploads.at(-1)!.uploadedAt));
  expect(Date.parse(uploads[0]!.uploadedAt)).toBeGreaterThanOrEqual(Date.parse(resource.attributes.createdAt));
}

describe("the documents' examples", () => {
  it('count an upload as a change of its owner, as the service does', () => {
    const message = example(client, 'Message');
    expectFilesCounted(message, message.attributes.fileAttachment);
    const visit = example(client, 'SiteVisit');
    expectFilesCounted(visit, visit.attributes.returnLabel);
  });

  it('give every event its own id, ticket.created at the visit creation, and the rest in workflow order', () => {
    const all = events();
    expect(new Set(all.map(({ event }) => event.id)).size).toBe(all.length);
    const visit = example(client, 'SiteVisit');
    for (const { event } of all) expect(event.resourceId).toBe(visit.id);
    expect(all[0]!.event.occurredAt).toBe(visit.attributes.createdAt);
    const times = all.map(({ event }) => Date.parse(event.occurredAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(times.length);
  });

  it('show the visit as the events leave it: Scheduled, last changed when job.scheduled occurred', () => {
    const visit = example(client, 'SiteVisit');
    const scheduled = events().find(({ type }) => type === 'job.scheduled')!.event;
    expect(visit.attributes.status).toBe(scheduled.data.status);
    expect(visit.attributes.updatedAt).toBe(scheduled.occurredAt);
    const { scheduledDate, etaTime, fieldRepName } = example(operator, 'OperatorSiteVisit').attributes;
    expect({ scheduledDate, etaTime }).toEqual({
      scheduledDate: scheduled.data.scheduledDate,
      etaTime: scheduled.data.etaTime,
    });
    expect(fieldRepName).toBe(events().find(({ type }) => type === 'rep.assigned')!.event.data.fieldRepName);
  });

  it("show the operator's delivery of job.scheduled with that event's id, after it occurred", () => {
    const delivery = example(operator, 'WebhookDelivery');
    const event = events().find(({ type }) => type === delivery.eventType)!.event;
    expect(delivery.eventId).toBe(event.id);
    expect(Date.parse(delivery.createdAt)).toBeGreaterThanOrEqual(Date.parse(event.occurredAt));
    const health = example(operator, 'WebhookSubscriptionWithHealth').health;
    expect(Date.parse(health.lastSuccessAt)).toBeGreaterThanOrEqual(Date.parse(delivery.completedAt));
  });
});
