import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  createItem,
  createProject,
  createSiteWithAssets,
  createVisit,
  visitTenant,
  type VisitTenant,
} from '../helpers/visits.js';

let t: TestApp;
const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let v: VisitTenant;
let other: VisitTenant;
beforeAll(async () => {
  t = await startTestApp({ clock });
  [v, other] = await Promise.all([visitTenant(t), visitTenant(t)]);
});
afterAll(async () => t?.close());

function patch(id: string, json: unknown, headers: Record<string, string> = {}) {
  return t.http.patch(`/api/v1/site-visits/${id}`, { token: v.token, json, headers });
}

describe('PATCH /api/v1/site-visits/{id}', () => {
  it('changes only the supplied fields, adds 1 to the version and moves updatedAt', async () => {
    const visit = await createVisit(t, v, { trackingNumber: 'TRK-1' });
    clock.advance(60_000);
    const response = await patch(visit.id, {
      description: 'Swap the screen',
      serviceType: 'Swap',
      partsReturnRequired: true,
      schedulingRule: 'Date Specific',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"2"');
    expect(response.body.data.meta).toEqual({ version: 2, etag: '"2"' });
    expect(response.body.data.attributes).toEqual({
      ...visit.attributes,
      description: 'Swap the screen',
      serviceType: 'Swap',
      partsReturnRequired: true,
      schedulingRule: 'Date Specific',
      updatedAt: new Date(Date.parse(visit.attributes.createdAt) + 60_000).toISOString(),
    });
  });

  it('clears optional fields with null', async () => {
    const visit = await createVisit(t, v, { trackingNumber: 'TRK-1', partsReturnRequired: false });
    const response = await patch(visit.id, {
      clientTicketNumber: null,
      trackingNumber: null,
      partsReturnRequired: null,
    });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes).toMatchObject({
      clientTicketNumber: null,
      trackingNumber: null,
      partsReturnRequired: null,
    });
  });

  it('answers the current representation without a new version when nothing changes', async () => {
    const visit = await createVisit(t, v);
    clock.advance(1_000);
    for (const body of [
      {},
      {
        description: visit.attributes.description,
        clientTicketNumber: visit.attributes.clientTicketNumber,
        startDate: '2026-12-01T10:00:00+01:00',
        projectId: String(v.projectId),
      },
    ]) {
      const response = await patch(visit.id, body);
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('"1"');
      expect(response.body.data).toEqual(visit);
    }
  });

  it('changes the references: project, item and site', async () => {
    const project = await createProject(t, v.tenantId, { projectId: 'PRJ-NEXT' });
    const item = await createItem(t, v.tenantId);
    const site = await createSiteWithAssets(t, v.tenantId, v.fullToken, 0);
    const visit = await createVisit(t, v);
    const response = await patch(visit.id, {
      projectId: project.projectId,
      itemName: item.itemName,
      clientSiteId: site.siteCode,
    });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes).toMatchObject({
      projectId: 'PRJ-NEXT',
      itemName: item.itemName,
      clientSiteId: site.siteCode,
    });
    expect(response.body.data.meta.version).toBe(2);
  });

  it('changes the dates, keeping dueDate not before startDate', async () => {
    const visit = await createVisit(t, v);
    const moved = await patch(visit.id, { startDate: '2026-12-05T08:00:00Z', dueDate: '2026-12-06T08:00:00Z' });
    expect(moved.status).toBe(200);
    expect(moved.body.data.attributes).toMatchObject({
      startDate: '2026-12-05T08:00:00.000Z',
      dueDate: '2026-12-06T08:00:00.000Z',
    });

    const early = await patch(visit.id, { dueDate: '2026-12-04T08:00:00Z' });
    expect(early.status).toBe(422);
    expect(early.body.errors).toEqual({ dueDate: ['must not be before startDate'] });
    const late = await patch(visit.id, { startDate: '2026-12-07T08:00:00Z' });
    expect(late.status).toBe(422);
    expect(late.body.errors).toEqual({ startDate: ['must not be after dueDate'] });
  });
});

describe('ETag and If-Match', () => {
  it('applies a patch whose If-Match is current and refuses a stale one with 409 version-conflict', async () => {
    const visit = await createVisit(t, v);
    const first = await patch(visit.id, { description: 'First' }, { 'if-match': '"1"' });
    expect(first.status).toBe(200);
    const stale = await patch(visit.id, { description: 'Second' }, { 'if-match': '"1"' });
    expect(stale.status).toBe(409);
    expect(stale.body.type).toMatch(/version-conflict$/);
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.body.data.attributes.description).toBe('First');
    expect(read.headers.get('etag')).toBe('"2"');
  });

  it('lets exactly one of concurrent writers holding the same ETag succeed', async () => {
    const visit = await createVisit(t, v);
    const responses = await Promise.all(
      ['A', 'B', 'C'].map((description) => patch(visit.id, { description }, { 'if-match': '"1"' })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409]);
  });

  it('refuses a malformed (unquoted) If-Match with 422 naming If-Match', async () => {
    const visit = await createVisit(t, v);
    const response = await patch(visit.id, { description: 'x' }, { 'if-match': '1' });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['If-Match']);
  });
});

describe('PATCH errors', () => {
  let visit: Awaited<ReturnType<typeof createVisit>>;
  beforeAll(async () => {
    visit = await createVisit(t, v, { siteAssetIds: [v.assetIds[0]] });
  });

  it.each([
    ['status', 'Completed'],
    ['clientId', 'x'],
    ['siteVisitAssets', []],
    ['assetsToService', ''],
    ['returnLabel', null],
    ['unknown', 1],
  ])('refuses %s with 422', async (field, value) => {
    const response = await patch(visit.id, { [field]: value });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual([field]);
  });

  it.each([
    ['description', null],
    ['serviceType', 'Repair'],
    ['schedulingRule', null],
    ['arePartsRequired', null],
    ['startDate', 'soon'],
  ])('refuses %s %j with 422', async (field, value) => {
    const response = await patch(visit.id, { [field]: value });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual([field]);
  });

  it('refuses an unknown, foreign or Inactive project with 409 invalid-project', async () => {
    const inactive = await createProject(t, v.tenantId, { status: 'Inactive' });
    for (const projectId of [123_456_789_012, other.projectId, inactive.projectId]) {
      const response = await patch(visit.id, { projectId });
      expect(response.status).toBe(409);
      expect(response.body.type).toMatch(/invalid-project$/);
    }
  });

  it('refuses an unknown or foreign site or item with 404', async () => {
    for (const body of [
      { clientSiteId: 'NOPE' },
      { clientSiteId: other.siteCode },
      { itemName: 'Nope' },
      { itemName: other.itemName },
    ]) {
      const response = await patch(visit.id, body);
      expect(response.status).toBe(404);
      expect(response.body.type).toMatch(/not-found$/);
    }
  });

  it('refuses a clientTicketNumber another visit of the tenant has, and accepts its own', async () => {
    const taken = await createVisit(t, v);
    const duplicate = await patch(visit.id, { clientTicketNumber: taken.attributes.clientTicketNumber });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.type).toMatch(/duplicate-resource$/);
    expect((await patch(visit.id, { clientTicketNumber: visit.attributes.clientTicketNumber })).status).toBe(200);
  });

  it('answers 404 for an unknown visit', async () => {
    const response = await patch('visit_00000000000000000000000000', { description: 'x' });
    expect(response.status).toBe(404);
  });

  it('left the visit as it was', async () => {
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.body.data).toEqual(visit);
  });
});
