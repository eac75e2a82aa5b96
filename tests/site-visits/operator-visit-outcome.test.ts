/**
 * What the operator recorded at the end of a visit stays on the visit, in the operator's view only: the quality
 * review that completed it and the last deliverables transmission (when, and the notes the client was sent). The
 * client API's representation stays SPEC's attribute table: the client learns of the notes through the
 * deliverables.transmitted event alone.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../helpers/tenants.js';
import { visitInStatus, visitTenant, workflowAction } from '../helpers/visits.js';

let t: TestApp;
const clock = new ManualClock(new Date('2026-12-01T08:00:00Z'));
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => t?.close());

/** SPEC's site-visit attributes as a response carries them (siteAssetIds is write-only). */
const SPEC_ATTRIBUTES = [
  ...['clientId', 'status', 'createdAt', 'updatedAt', 'clientSiteId', 'description', 'clientTicketNumber'],
  ...['serviceType', 'jobInstructions', 'projectId', 'itemName', 'startDate', 'dueDate', 'arePartsRequired'],
  ...['trackingNumber', 'partsReturnRequired', 'schedulingRule', 'assetsToService', 'siteVisitAssets', 'returnLabel'],
].sort();

const NOTES = 'Reader replaced; photos of the façade attached.\nNext visit: firmware.';

it('shows the review and the notes transmitted, with when, in every operator view of the visit', async () => {
  const v = await visitTenant(t);
  const visit = await visitInStatus(t, v, 'Dispatched');
  const before = (await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`)).body.data.attributes;
  expect(before).toMatchObject({ qualityReviewPassed: null, deliverablesTransmittedAt: null, deliverablesNotes: null });

  clock.advance(60_000);
  const sentAt = clock.now().toISOString();
  const sent = await workflowAction(t, visit.id, { action: 'transmit-deliverables', notes: NOTES });
  expect(sent.status, sent.text).toBe(200);
  expect(sent.body.data.attributes).toMatchObject({ deliverablesTransmittedAt: sentAt, deliverablesNotes: NOTES });

  clock.advance(60_000);
  const completed = await workflowAction(t, visit.id, { action: 'complete', qualityReviewPassed: true });
  expect(completed.status, completed.text).toBe(200);
  const after = {
    status: 'Completed',
    completedAt: clock.now().toISOString(),
    qualityReviewPassed: true,
    deliverablesTransmittedAt: sentAt,
    deliverablesNotes: NOTES,
  };
  expect(completed.body.data.attributes).toMatchObject(after);

  // Read again, alone and in the tenant's list: the same.
  const read = await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`);
  expect(read.body.data).toEqual(completed.body.data);
  const listed = await admin(t, 'GET', `/admin/v1/tenants/${v.tenantId}/site-visits`);
  const inList = listed.body.data.find((each: { id: string }) => each.id === visit.id);
  expect(inList.attributes).toMatchObject(after);

  // A later transmission without notes is the last one: its time, no notes.
  clock.advance(60_000);
  const again = await workflowAction(t, visit.id, { action: 'transmit-deliverables', notes: null });
  expect(again.body.data.attributes).toMatchObject({
    qualityReviewPassed: true,
    deliverablesTransmittedAt: clock.now().toISOString(),
    deliverablesNotes: null,
  });
});

it("leaves the client API's representation exactly SPEC's, the notes nowhere in it", async () => {
  const v = await visitTenant(t);
  const visit = await visitInStatus(t, v, 'Completed');
  const sent = await workflowAction(t, visit.id, { action: 'transmit-deliverables', notes: NOTES });
  expect(sent.status).toBe(200);

  const one = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
  const list = await t.http.get('/api/v1/site-visits', { token: v.token });
  expect(one.status).toBe(200);
  expect(Object.keys(one.body.data.attributes).sort()).toEqual(SPEC_ATTRIBUTES);
  const listed = list.body.data.find((each: { id: string }) => each.id === visit.id);
  expect(Object.keys(listed.attributes).sort()).toEqual(SPEC_ATTRIBUTES);
  for (const text of [one.text, list.text]) {
    expect(text).not.toContain('Reader replaced');
    expect(text).not.toContain('qualityReviewPassed');
  }
});
