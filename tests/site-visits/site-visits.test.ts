import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../helpers/tenants.js';
import {
  createProject,
  createVisit,
  visitBody,
  visitTenant,
  type VisitTenant,
  withNewSite,
} from '../helpers/visits.js';

let t: TestApp;
/** For tests that only add visits of their own; tests that count or rename make their own tenant. */
let shared: VisitTenant;
beforeAll(async () => {
  t = await startTestApp();
  shared = await visitTenant(t);
});
afterAll(async () => t?.close());

describe('POST /api/v1/site-visits', () => {
  it('creates a visit with status New and every field, with ETag "1"', async () => {
    const v = shared;
    const body = visitBody(v, { clientTicketNumber: 'INC-1001', trackingNumber: '1Z999', partsReturnRequired: false });
    const response = await t.http.post('/api/v1/site-visits', { token: v.token, json: body });

    expect(response.status).toBe(201);
    expect(response.headers.get('etag')).toBe('"1"');
    const visit = response.body.data;
    expect(visit.id).toMatch(/^visit_[0-9a-z]{26}$/);
    expect(visit.type).toBe('site-visits');
    expect(visit.meta).toEqual({ version: 1, etag: '"1"' });
    expect(visit.attributes).toEqual({
      clientId: v.tenantId,
      status: 'New',
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: visit.attributes.createdAt,
      clientSiteId: v.siteCode,
      description: body.description,
      clientTicketNumber: 'INC-1001',
      serviceType: 'Break / Fix',
      jobInstructions: body.jobInstructions,
      projectId: v.projectId,
      itemName: v.itemName,
      startDate: '2026-12-01T09:00:00.000Z',
      dueDate: '2026-12-03T17:00:00.000Z',
      arePartsRequired: true,
      trackingNumber: '1Z999',
      partsReturnRequired: false,
      schedulingRule: 'Date Range',
      assetsToService: '',
      siteVisitAssets: [],
      returnLabel: null,
    });
  });

  it('stores optional fields as null when omitted or null', async () => {
    const v = shared;
    const { clientTicketNumber: _omitted, ...body } = visitBody(v);
    const omitted = await t.http.post('/api/v1/site-visits', { token: v.token, json: body });
    const nulls = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: { ...body, clientTicketNumber: null, trackingNumber: null, partsReturnRequired: null },
    });
    for (const response of [omitted, nulls]) {
      expect(response.status).toBe(201);
      expect(response.body.data.attributes).toMatchObject({
        clientTicketNumber: null,
        trackingNumber: null,
        partsReturnRequired: null,
      });
    }
  });

  it('accepts every service type and scheduling rule of SPEC', async () => {
    const v = shared;
    const serviceTypes = [
      'Regular Service',
      'Preventative Maintenance',
      'Bonus',
      'Break / Fix',
      'Survey',
      'Site Prep',
      'Installation',
      'Relocation',
      'Removal',
      'Swap',
      'Audit',
      'Storage',
      'W/G Service',
      'Transport',
      'Machine Prep',
      'Sign/Wrap',
      'Inventory',
      'Delivery Acceptance',
      'Delivery/Inventory',
      'Install Revisit',
      'Secret Shopper',
      'Recycling',
      'Training',
    ];
    const rules = ['Date/Time Specific', 'Date Specific', 'Date Range'];
    const responses = await Promise.all(
      serviceTypes.map((serviceType, index) =>
        t.http.post('/api/v1/site-visits', {
          token: v.token,
          json: visitBody(v, { serviceType, schedulingRule: rules[index % 3] }),
        }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(serviceTypes.map(() => 201));
    expect(responses.map((response) => response.body.data.attributes.serviceType)).toEqual(serviceTypes);
  });

  it('returns dates in UTC with Z whatever offset was sent, and allows dueDate equal to startDate', async () => {
    const v = shared;
    const response = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { startDate: '2026-12-01T11:30:00+02:00', dueDate: '2026-12-01T09:30:00.000Z' }),
    });
    expect(response.status).toBe(201);
    expect(response.body.data.attributes).toMatchObject({
      startDate: '2026-12-01T09:30:00.000Z',
      dueDate: '2026-12-01T09:30:00.000Z',
    });
  });

  it('treats projectId 12 and "12" as the same project and answers in the project\'s own form', async () => {
    const v = shared;
    await createProject(t, v.tenantId, { projectId: 12 });
    await createProject(t, v.tenantId, { projectId: 'PRJ-9' });
    const asString = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { projectId: '12' }),
    });
    const asNumber = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { projectId: 12 }),
    });
    const textual = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { projectId: 'PRJ-9' }),
    });
    expect(asString.body.data.attributes.projectId).toBe(12);
    expect(asNumber.body.data.attributes.projectId).toBe(12);
    expect(textual.body.data.attributes.projectId).toBe('PRJ-9');
  });
});

describe('GET /api/v1/site-visits/{id}', () => {
  it('reads the visit with its ETag', async () => {
    const v = shared;
    const created = await createVisit(t, v);
    const response = await t.http.get(`/api/v1/site-visits/${created.id}`, { token: v.token });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"1"');
    expect(response.body.data).toEqual(created);
  });

  it("shows the site's current siteCode as clientSiteId", async () => {
    const v = await withNewSite(t, shared, 0);
    const created = await createVisit(t, v);
    const renamed = await t.http.patch(`/api/v1/sites/${v.siteId}`, {
      token: v.fullToken,
      json: { siteCode: `${v.siteCode}-NEW` },
    });
    expect(renamed.status).toBe(200);
    const response = await t.http.get(`/api/v1/site-visits/${created.id}`, { token: v.token });
    expect(response.body.data.attributes.clientSiteId).toBe(`${v.siteCode}-NEW`);
  });

  it("takes a new version when its site's code changes, and only then (its ETag follows its representation)", async () => {
    const v = await withNewSite(t, shared, 0);
    const created = await createVisit(t, v);
    const site = `/api/v1/sites/${v.siteId}`;
    // A change of the site that leaves its code as it was leaves the visit as it was.
    expect((await t.http.patch(site, { token: v.fullToken, json: { name: 'Another name' } })).status).toBe(200);
    const unchanged = await t.http.get(`/api/v1/site-visits/${created.id}`, { token: v.token });
    expect(unchanged.headers.get('etag')).toBe('"1"');

    expect((await t.http.patch(site, { token: v.fullToken, json: { siteCode: `${v.siteCode}-V2` } })).status).toBe(200);
    const renamed = await t.http.get(`/api/v1/site-visits/${created.id}`, { token: v.token });
    expect(renamed.headers.get('etag')).toBe('"2"');
    expect(renamed.body.data.meta.version).toBe(2);
    expect(renamed.body.data.attributes.updatedAt > created.attributes.updatedAt).toBe(true);

    // An If-Match taken before the rename is stale now.
    const stale = await t.http.patch(`/api/v1/site-visits/${created.id}`, {
      token: v.fullToken,
      headers: { 'if-match': '"1"' },
      json: { description: 'Changed' },
    });
    expect(stale.status).toBe(409);
  });
});

describe('GET /api/v1/site-visits', () => {
  let v: VisitTenant;
  let ids: string[];
  beforeAll(async () => {
    v = await visitTenant(t);
    ids = [];
    for (const ticket of ['A-1', 'A-2', 'A-3']) ids.push((await createVisit(t, v, { clientTicketNumber: ticket })).id);
  });

  it('pages oldest first with meta.nextCursor only while more exist', async () => {
    const first = await t.http.get('/api/v1/site-visits', { token: v.token, query: { 'page[size]': 2 } });
    expect(first.status).toBe(200);
    expect(first.body.data.map((visit: { id: string }) => visit.id)).toEqual(ids.slice(0, 2));
    expect(first.body.meta).toEqual({ pageSize: 2, nextCursor: expect.any(String) });

    const second = await t.http.get('/api/v1/site-visits', {
      token: v.token,
      query: { 'page[size]': 2, 'page[after]': first.body.meta.nextCursor },
    });
    expect(second.body.data.map((visit: { id: string }) => visit.id)).toEqual(ids.slice(2));
    expect(second.body.meta).toEqual({ pageSize: 2 });
  });

  it('uses page size 25 by default', async () => {
    const response = await t.http.get('/api/v1/site-visits', { token: v.token });
    expect(response.body.meta).toEqual({ pageSize: 25 });
    expect(response.body.data).toHaveLength(3);
  });

  it('looks a visit up by clientTicketNumber in the list form (exact, case-sensitive)', async () => {
    const found = await t.http.get('/api/v1/site-visits', { token: v.token, query: { clientTicketNumber: 'A-2' } });
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ data: [expect.objectContaining({ id: ids[1] })], meta: { pageSize: 25 } });

    for (const clientTicketNumber of ['a-2', 'A-', 'A-22']) {
      const missing = await t.http.get('/api/v1/site-visits', { token: v.token, query: { clientTicketNumber } });
      expect(missing.body).toEqual({ data: [], meta: { pageSize: 25 } });
    }
  });

  it('accepts a cursor of the unfiltered list in the filtered one', async () => {
    const first = await t.http.get('/api/v1/site-visits', { token: v.token, query: { 'page[size]': 1 } });
    const filtered = await t.http.get('/api/v1/site-visits', {
      token: v.token,
      query: { clientTicketNumber: 'A-1', 'page[after]': first.body.meta.nextCursor },
    });
    expect(filtered.status).toBe(200);
    expect(filtered.body.data).toEqual([]);
  });
});

describe('ticket numbers', () => {
  it('are unique per tenant only: another tenant may use the same one', async () => {
    const one = await visitTenant(t);
    const two = await visitTenant(t);
    expect(
      (
        await t.http.post('/api/v1/site-visits', {
          token: one.token,
          json: visitBody(one, { clientTicketNumber: 'SHARED-1' }),
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await t.http.post('/api/v1/site-visits', {
          token: two.token,
          json: visitBody(two, { clientTicketNumber: 'SHARED-1' }),
        })
      ).status,
    ).toBe(201);
  });

  it('are case-sensitive', async () => {
    const v = shared;
    expect(
      (
        await t.http.post('/api/v1/site-visits', {
          token: v.token,
          json: visitBody(v, { clientTicketNumber: 'case-1' }),
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await t.http.post('/api/v1/site-visits', {
          token: v.token,
          json: visitBody(v, { clientTicketNumber: 'CASE-1' }),
        })
      ).status,
    ).toBe(201);
  });

  it('may be omitted by any number of visits', async () => {
    const v = shared;
    for (let index = 0; index < 2; index++) {
      expect(
        (
          await t.http.post('/api/v1/site-visits', {
            token: v.token,
            json: visitBody(v, { clientTicketNumber: undefined }),
          })
        ).status,
      ).toBe(201);
    }
  });
});

describe('the operator can still provision', () => {
  it('a project created Inactive becomes usable when activated', async () => {
    const v = shared;
    await createProject(t, v.tenantId, { projectId: 4242, status: 'Inactive' });
    expect(
      (await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v, { projectId: 4242 }) })).status,
    ).toBe(409);
    await admin(t, 'PATCH', `/admin/v1/tenants/${v.tenantId}/projects/4242`, { status: 'Active' });
    expect(
      (await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v, { projectId: 4242 }) })).status,
    ).toBe(201);
  });
});
