/**
 * The operator's side of site visits: visits created outside the client API, and the workflow that moves
 * a visit New → Scheduled → Dispatched → Completed, each change with exactly one event and one version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRow } from '../../src/db/schema.js';
import { ManualClock } from '../../src/lib/clock.js';
import { listEventsOfResource } from '../../src/modules/outbox/repository/events.js';
import { toEnvelope } from '../../src/modules/outbox/service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, operatorCreateVisit, visitBody, visitTenant, workflowAction } from '../helpers/visits.js';
import { expectPublishedShape } from '../helpers/webhooks.js';

let t: TestApp;
const clock = new ManualClock();
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => t?.close());

/** The event as delivered, checked against the envelope schema the OpenAPI document publishes for its type. */
function published(row: EventRow) {
  const envelope = toEnvelope(row);
  expectPublishedShape(JSON.parse(JSON.stringify(envelope)));
  return envelope;
}

async function eventsOf(tenantId: string, visitId: string) {
  return (await listEventsOfResource(t.database.db, tenantId, visitId)).map(published);
}

const WORKFLOW_FIELDS = [
  'fieldRepName',
  'scheduledDate',
  'etaTime',
  'dispatchedAt',
  'completedAt',
  'qualityReviewPassed',
  'deliverablesTransmittedAt',
  'deliverablesNotes',
];

describe('POST /admin/v1/tenants/{tenantId}/site-visits', () => {
  it('creates a visit from the client create body: 201, status New, assets shown, one ticket.created', async () => {
    const v = await visitTenant(t);
    const response = await operatorCreateVisit(t, v, { clientTicketNumber: 'OP-1', siteAssetIds: v.assetIds });
    expect(response.status, response.text).toBe(201);
    expect(response.headers.get('etag')).toBe('"1"');
    const visit = response.body.data;
    expect(visit.id).toMatch(/^visit_[0-9a-z]+$/);
    expect(visit.type).toBe('site-visits');
    expect(visit.meta).toEqual({ version: 1, etag: '"1"' });
    expect(visit.attributes).toMatchObject({
      clientId: v.tenantId,
      status: 'New',
      clientSiteId: v.siteCode,
      clientTicketNumber: 'OP-1',
      projectId: v.projectId,
      itemName: v.itemName,
      returnLabel: null,
      fieldRepName: null,
      scheduledDate: null,
      etaTime: null,
      dispatchedAt: null,
      completedAt: null,
      qualityReviewPassed: null,
      deliverablesTransmittedAt: null,
      deliverablesNotes: null,
    });
    expect(visit.attributes.siteVisitAssets.map((asset: { siteAssetId: number }) => asset.siteAssetId)).toEqual(
      v.assetIds,
    );
    expect(visit.attributes.assetsToService).toBe(
      `Kiosk 1 (aisle 1) [${v.siteCode}-A1]; Kiosk 2 (aisle 2) [${v.siteCode}-A2]`,
    );

    const events = await eventsOf(v.tenantId, visit.id);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'ticket.created',
        resourceId: visit.id,
        occurredAt: visit.attributes.createdAt,
        data: { clientTicketNumber: 'OP-1', clientSiteId: v.siteCode, status: 'New' },
      }),
    ]);

    // The client sees the visit as its own, in the client representation (no workflow fields).
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.status).toBe(200);
    const clientView = Object.fromEntries(
      Object.entries(visit.attributes).filter(([field]) => !WORKFLOW_FIELDS.includes(field)),
    );
    expect(read.body.data.attributes).toEqual(clientView);
    const byTicket = await t.http.get('/api/v1/site-visits', { token: v.token, query: { clientTicketNumber: 'OP-1' } });
    expect(byTicket.body.data.map((found: { id: string }) => found.id)).toEqual([visit.id]);
  });

  it("shares the ticket numbers of the client API: neither side can reuse the other's", async () => {
    const v = await visitTenant(t);
    await createVisit(t, v, { clientTicketNumber: 'SHARED-1' });
    expect((await operatorCreateVisit(t, v, { clientTicketNumber: 'SHARED-1' })).status).toBe(409);
    expect((await operatorCreateVisit(t, v, { clientTicketNumber: 'SHARED-2' })).status).toBe(201);
    const client = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { clientTicketNumber: 'SHARED-2' }),
    });
    expect(client.status).toBe(409);
  });
});

describe('POST /admin/v1/site-visits/{visitId}/workflow', () => {
  it('walks a visit to Completed: each action one event with its data, version +1, updatedAt moved', async () => {
    const v = await visitTenant(t);
    const created = await createVisit(t, v, { clientTicketNumber: 'WALK-1' });
    const steps: [Record<string, unknown>, string, Record<string, unknown>][] = [
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
        { action: 'schedule', scheduledDate: '2026-12-03' },
        'schedule.updated',
        { status: 'Scheduled', scheduledDate: '2026-12-03', etaTime: null },
      ],
      [
        { action: 'assign-rep', fieldRepName: null },
        'rep.assigned',
        { status: 'Scheduled', fieldRepName: 'Awaiting reassignment' },
      ],
      [
        { action: 'assign-rep', fieldRepName: 'Sam Ortiz' },
        'rep.assigned',
        { status: 'Scheduled', fieldRepName: 'Sam Ortiz' },
      ],
      [{ action: 'dispatch' }, 'job.dispatched', { status: 'Dispatched' }],
      [
        { action: 'transmit-deliverables', notes: 'Photos of the installed reader attached.' },
        'deliverables.transmitted',
        { status: 'Dispatched', notes: 'Photos of the installed reader attached.' },
      ],
      [{ action: 'complete', qualityReviewPassed: true }, 'job.completed', { status: 'Completed' }],
      [{ action: 'transmit-deliverables' }, 'deliverables.transmitted', { status: 'Completed', notes: null }],
    ];

    let previous = created;
    for (const [index, [action, type, data]] of steps.entries()) {
      clock.advance(1_000);
      const response = await workflowAction(t, created.id, action);
      expect(response.status, response.text).toBe(200);
      expect(response.headers.get('etag')).toBe(`"${index + 2}"`);
      const visit = response.body.data;
      expect(visit.meta.version).toBe(previous.meta.version + 1);
      expect(visit.attributes.updatedAt).toBe(clock.now().toISOString());
      expect(visit.attributes.status).toBe(data.status);
      // What the operator recorded stays on the visit: the review from completion on, the last notes sent.
      expect(visit.attributes.qualityReviewPassed).toBe(data.status === 'Completed' ? true : null);
      if (type === 'deliverables.transmitted')
        expect(visit.attributes).toMatchObject({
          deliverablesTransmittedAt: clock.now().toISOString(),
          deliverablesNotes: data.notes,
        });

      const events = await eventsOf(v.tenantId, created.id);
      expect(events).toHaveLength(index + 2);
      expect(events.at(-1)).toMatchObject({ type, resourceId: created.id, occurredAt: clock.now().toISOString() });
      expect(events.at(-1)!.data).toEqual({ clientTicketNumber: 'WALK-1', clientSiteId: v.siteCode, ...data });
      previous = visit;
    }

    const final = previous.attributes;
    expect(final).toMatchObject({
      status: 'Completed',
      fieldRepName: 'Sam Ortiz',
      scheduledDate: '2026-12-03',
      etaTime: null,
    });
    expect(Date.parse(final.dispatchedAt)).toBeLessThan(Date.parse(final.completedAt));
    expect(final.deliverablesTransmittedAt).toBe(final.updatedAt);
    // The last transmission had no notes: the first one's are no longer the visit's.
    expect(final).toMatchObject({ qualityReviewPassed: true, deliverablesNotes: null });

    // The operator reads the same state; the client sees the status and the version, not the workflow's fields.
    const operatorView = await admin(t, 'GET', `/admin/v1/site-visits/${created.id}`);
    expect(operatorView.status).toBe(200);
    expect(operatorView.body.data).toEqual(previous);
    const clientView = await t.http.get(`/api/v1/site-visits/${created.id}`, { token: v.token });
    expect(clientView.body.data.attributes.status).toBe('Completed');
    expect(clientView.body.data.meta.version).toBe(steps.length + 1);
    expect(clientView.headers.get('etag')).toBe(`"${steps.length + 1}"`);
    for (const field of WORKFLOW_FIELDS) expect(clientView.body.data.attributes).not.toHaveProperty(field);
    expect(clientView.text).not.toContain('Sam Ortiz');
  });

  it('works on visits created by the operator alike', async () => {
    const v = await visitTenant(t);
    const created = (await operatorCreateVisit(t, v)).body.data;
    const scheduled = await workflowAction(t, created.id, {
      action: 'schedule',
      scheduledDate: '2027-01-15',
      etaTime: '00:00',
    });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.data.attributes).toMatchObject({
      status: 'Scheduled',
      scheduledDate: '2027-01-15',
      etaTime: '00:00',
    });
    expect((await eventsOf(v.tenantId, created.id)).map((event) => event.type)).toEqual([
      'ticket.created',
      'job.scheduled',
    ]);
  });

  it('an action that changes nothing answers the visit unchanged: no event, same version, same updatedAt', async () => {
    const v = await visitTenant(t);
    const created = await createVisit(t, v);
    const first = await workflowAction(t, created.id, {
      action: 'schedule',
      scheduledDate: '2026-12-02',
      etaTime: '23:59',
    });
    const rep = await workflowAction(t, created.id, { action: 'assign-rep', fieldRepName: 'Jordan Lee' });
    expect(rep.body.data.meta.version).toBe(3);
    clock.advance(1_000);

    for (const repeat of [
      { action: 'schedule', scheduledDate: '2026-12-02', etaTime: '23:59' },
      { action: 'assign-rep', fieldRepName: 'Jordan Lee' },
    ]) {
      const again = await workflowAction(t, created.id, repeat);
      expect(again.status).toBe(200);
      expect(again.body.data).toEqual(rep.body.data);
      expect(again.headers.get('etag')).toBe('"3"');
    }
    // Clearing a rep that was never assigned changes nothing either.
    const other = await createVisit(t, v);
    const cleared = await workflowAction(t, other.id, { action: 'assign-rep', fieldRepName: null });
    expect(cleared.body.data.meta.version).toBe(1);
    expect((await eventsOf(v.tenantId, other.id)).map((event) => event.type)).toEqual(['ticket.created']);

    expect((await eventsOf(v.tenantId, created.id)).map((event) => event.type)).toEqual([
      'ticket.created',
      'job.scheduled',
      'rep.assigned',
    ]);
    expect(first.body.data.meta.version).toBe(2);
  });

  it('treats the schedule as a whole: an absent or null ETA replaces the one entered', async () => {
    const v = await visitTenant(t);
    const created = await createVisit(t, v);
    await workflowAction(t, created.id, { action: 'schedule', scheduledDate: '2026-12-02', etaTime: '08:00' });
    const dropped = await workflowAction(t, created.id, {
      action: 'schedule',
      scheduledDate: '2026-12-02',
      etaTime: null,
    });
    expect(dropped.body.data.attributes).toMatchObject({ scheduledDate: '2026-12-02', etaTime: null });
    const eta = await workflowAction(t, created.id, {
      action: 'schedule',
      scheduledDate: '2026-12-02',
      etaTime: '08:15',
    });
    expect(eta.body.data.meta.version).toBe(4);
    const events = await eventsOf(v.tenantId, created.id);
    expect(events.map((event) => [event.type, event.data.scheduledDate, event.data.etaTime])).toEqual([
      ['ticket.created', undefined, undefined],
      ['job.scheduled', '2026-12-02', '08:00'],
      ['schedule.updated', '2026-12-02', null],
      ['schedule.updated', '2026-12-02', '08:15'],
    ]);
  });

  it("carries the visit's current siteCode and ticket number, after client changes too", async () => {
    const v = await visitTenant(t);
    const created = await createVisit(t, v, { clientTicketNumber: null });
    expect((await workflowAction(t, created.id, { action: 'dispatch' })).status).toBe(409);
    await t.http.patch(`/api/v1/sites/${v.siteId}`, { token: v.fullToken, json: { siteCode: `${v.siteCode}-NEW` } });
    const patched = await t.http.patch(`/api/v1/site-visits/${created.id}`, {
      token: v.token,
      json: { clientTicketNumber: 'LATER-1' },
    });
    // Version 2 is the site's new code, 3 the ticket number.
    expect(patched.body.data.meta.version).toBe(3);
    const scheduled = await workflowAction(t, created.id, { action: 'schedule', scheduledDate: '2026-12-02' });
    expect(scheduled.body.data.meta.version).toBe(4);
    const events = await eventsOf(v.tenantId, created.id);
    expect(events.map((event) => event.data)).toEqual([
      { clientTicketNumber: null, clientSiteId: v.siteCode, status: 'New' },
      {
        clientTicketNumber: 'LATER-1',
        clientSiteId: `${v.siteCode}-NEW`,
        status: 'Scheduled',
        scheduledDate: '2026-12-02',
        etaTime: null,
      },
    ]);
  });
});

describe('concurrent workflow actions on one visit', () => {
  it('run one after the other: every change gets its own version and event', async () => {
    const v = await visitTenant(t);
    const created = await createVisit(t, v);
    const names = ['Ana', 'Ben', 'Cy', 'Dee', 'Eli', 'Fay'];
    const responses = await Promise.all(
      names.map((fieldRepName) => workflowAction(t, created.id, { action: 'assign-rep', fieldRepName })),
    );
    expect(responses.map((response) => response.status)).toEqual(names.map(() => 200));
    expect(responses.map((response) => response.body.data.meta.version).sort((a, b) => a - b)).toEqual([
      2, 3, 4, 5, 6, 7,
    ]);

    const events = (await eventsOf(v.tenantId, created.id)).slice(1);
    expect(events.map((event) => event.data.fieldRepName).sort()).toEqual([...names].sort());
    const last = await admin(t, 'GET', `/admin/v1/site-visits/${created.id}`);
    expect(last.body.data.meta.version).toBe(7);
    expect(last.body.data.attributes.fieldRepName).toBe(events.at(-1)!.data.fieldRepName);
  });

  it('let exactly one of two dispatches through; the other sees the Dispatched visit (409)', async () => {
    const v = await visitTenant(t);
    const created = await createVisit(t, v);
    await workflowAction(t, created.id, { action: 'schedule', scheduledDate: '2026-12-02' });
    const responses = await Promise.all([1, 2, 3].map(() => workflowAction(t, created.id, { action: 'dispatch' })));
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409]);
    expect((await eventsOf(v.tenantId, created.id)).map((event) => event.type)).toEqual([
      'ticket.created',
      'job.scheduled',
      'job.dispatched',
    ]);
    expect((await admin(t, 'GET', `/admin/v1/site-visits/${created.id}`)).body.data.meta.version).toBe(3);
  });
});
