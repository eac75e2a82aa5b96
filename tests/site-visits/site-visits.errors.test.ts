import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  createItem,
  createProject,
  createSiteWithAssets,
  createVisit,
  visitBody,
  visitTenant,
  type VisitTenant,
} from '../helpers/visits.js';

let t: TestApp;
/** One tenant for the requests refused before anything is written; tests that write make their own. */
let v: VisitTenant;
/** Another tenant whose site, project, item and assets the first one must not reach. */
let other: VisitTenant;
beforeAll(async () => {
  t = await startTestApp();
  [v, other] = await Promise.all([visitTenant(t), visitTenant(t)]);
});
afterAll(async () => t?.close());

function post(body: unknown, token = v.token) {
  return t.http.post('/api/v1/site-visits', { token, json: body });
}

function expectValidation(response: { status: number; body: any }, fields: string[]) {
  expect(response.status).toBe(422);
  expect(response.body.type).toMatch(/validation-error$/);
  expect(Object.keys(response.body.errors).sort()).toEqual([...fields].sort());
}

const REQUIRED = [
  'clientSiteId',
  'description',
  'serviceType',
  'jobInstructions',
  'projectId',
  'itemName',
  'startDate',
  'dueDate',
  'arePartsRequired',
  'schedulingRule',
];

describe('create body validation (422)', () => {
  it.each(REQUIRED)('requires %s', async (field) => {
    const body: Record<string, unknown> = visitBody(v);
    delete body[field];
    const response = await post(body);
    expectValidation(response, [field]);
    expect(response.body.errors[field]).toEqual(['is required']);
  });

  it.each(REQUIRED)('refuses null for %s', async (field) => {
    expectValidation(await post(visitBody(v, { [field]: null })), [field]);
  });

  it('names every missing field at once', async () => {
    expectValidation(await post({}), REQUIRED);
  });

  it.each([
    ['serviceType', 'Break/Fix'],
    ['serviceType', 'break / fix'],
    ['serviceType', 'Repair'],
    ['serviceType', ''],
    ['schedulingRule', 'Date range'],
    ['schedulingRule', 'ASAP'],
  ])('refuses %s %j (enum)', async (field, value) => {
    const response = await post(visitBody(v, { [field]: value }));
    expectValidation(response, [field]);
    expect(response.body.errors[field][0]).toMatch(/^must be one of: /);
  });

  it.each([
    ['status', 'Scheduled'],
    ['clientId', 'tnt_x'],
    ['assetsToService', 'Kiosk'],
    ['siteVisitAssets', []],
    ['returnLabel', null],
    ['createdAt', '2026-01-01T00:00:00Z'],
  ])('refuses the read-only field %s', async (field, value) => {
    const response = await post(visitBody(v, { [field]: value }));
    expectValidation(response, [field]);
    expect(response.body.errors[field]).toEqual(['is read-only and cannot be written']);
  });

  it('refuses unknown fields', async () => {
    const response = await post(visitBody(v, { priority: 'high' }));
    expectValidation(response, ['priority']);
    expect(response.body.errors.priority).toEqual(['is not a known field']);
  });

  it.each([
    { field: 'description', value: '', show: JSON.stringify(''), errorField: 'description' },
    { field: 'description', value: 'x'.repeat(2001), show: '2001 characters', errorField: 'description' },
    { field: 'jobInstructions', value: 'x'.repeat(10001), show: '10001 characters', errorField: 'jobInstructions' },
    { field: 'clientTicketNumber', value: 'x'.repeat(101), show: '101 characters', errorField: 'clientTicketNumber' },
    { field: 'clientTicketNumber', value: '', show: JSON.stringify(''), errorField: 'clientTicketNumber' },
    { field: 'trackingNumber', value: 'x'.repeat(101), show: '101 characters', errorField: 'trackingNumber' },
    { field: 'itemName', value: 'x'.repeat(201), show: '201 characters', errorField: 'itemName' },
    { field: 'clientSiteId', value: 'x'.repeat(101), show: '101 characters', errorField: 'clientSiteId' },
    { field: 'projectId', value: true, show: JSON.stringify(true), errorField: 'projectId' },
    { field: 'projectId', value: -1, show: JSON.stringify(-1), errorField: 'projectId' },
    { field: 'projectId', value: 1.5, show: JSON.stringify(1.5), errorField: 'projectId' },
    { field: 'projectId', value: '', show: JSON.stringify(''), errorField: 'projectId' },
    { field: 'arePartsRequired', value: 'true', show: JSON.stringify('true'), errorField: 'arePartsRequired' },
    { field: 'partsReturnRequired', value: 'yes', show: JSON.stringify('yes'), errorField: 'partsReturnRequired' },
    { field: 'siteAssetIds', value: 'all', show: JSON.stringify('all'), errorField: 'siteAssetIds' },
    { field: 'siteAssetIds', value: ['1'], show: JSON.stringify(['1']), errorField: 'siteAssetIds[0]' },
    { field: 'siteAssetIds', value: [0], show: JSON.stringify([0]), errorField: 'siteAssetIds[0]' },
    {
      field: 'siteAssetIds',
      value: [2_147_483_648],
      show: JSON.stringify([2_147_483_648]),
      errorField: 'siteAssetIds[0]',
    },
    { field: 'siteAssetIds', value: null, show: JSON.stringify(null), errorField: 'siteAssetIds' },
    {
      field: 'siteAssetIds',
      value: Array.from({ length: 201 }, (_, index) => index + 1),
      show: '201 ids',
      errorField: 'siteAssetIds',
    },
    { field: 'startDate', value: '2026-12-01', show: JSON.stringify('2026-12-01'), errorField: 'startDate' },
    {
      field: 'startDate',
      value: '2026-12-01T09:00:00',
      show: JSON.stringify('2026-12-01T09:00:00'),
      errorField: 'startDate',
    },
    { field: 'startDate', value: 'tomorrow', show: JSON.stringify('tomorrow'), errorField: 'startDate' },
    { field: 'dueDate', value: 1_700_000_000, show: JSON.stringify(1_700_000_000), errorField: 'dueDate' },
  ])('refuses $field $show', async ({ field, value, errorField }) => {
    expectValidation(await post(visitBody(v, { [field]: value })), [errorField]);
  });

  it('keeps the longest accepted values', async () => {
    const response = await post(
      visitBody(v, {
        description: 'd'.repeat(2000),
        jobInstructions: 'j'.repeat(10000),
        clientTicketNumber: `${'t'.repeat(90)}${Date.now()}`.slice(-100),
        trackingNumber: 'x'.repeat(100),
      }),
    );
    expect(response.status).toBe(201);
  });

  it('refuses a dueDate before the startDate', async () => {
    const response = await post(visitBody(v, { startDate: '2026-12-02T00:00:00Z', dueDate: '2026-12-01T23:59:59Z' }));
    expectValidation(response, ['dueDate']);
    expect(response.body.errors.dueDate).toEqual(['must not be before startDate']);
  });

  it('refuses a body that is not an object', async () => {
    expectValidation(await post([visitBody(v)]), ['body']);
  });

  it('checks the schema before the references', async () => {
    const response = await post(
      visitBody(v, { clientSiteId: 'NOPE', projectId: 999_999_999_999, serviceType: 'Repair' }),
    );
    expectValidation(response, ['serviceType']);
  });
});

describe('references', () => {
  it('refuses an unknown project with 409 invalid-project', async () => {
    const response = await post(visitBody(v, { projectId: 987_654_321_000 }));
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/invalid-project$/);
    expect(response.body.errors).toEqual({ projectId: ['is not one of your projects'] });
  });

  it("refuses another tenant's project with 409 invalid-project", async () => {
    const response = await post(visitBody(v, { projectId: other.projectId }));
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/invalid-project$/);
  });

  it('refuses an Inactive project with 409 invalid-project', async () => {
    const inactive = await createProject(t, v.tenantId, { status: 'Inactive' });
    const response = await post(visitBody(v, { projectId: inactive.projectId }));
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/invalid-project$/);
    expect(response.body.errors).toEqual({ projectId: ['is not an Active project'] });
  });

  it('reports an invalid project before an unknown site or item', async () => {
    const response = await post(
      visitBody(v, { projectId: 987_654_321_000, clientSiteId: 'NO-SUCH-SITE', itemName: 'No such item' }),
    );
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/invalid-project$/);
  });

  it('refuses an unknown clientSiteId with 404', async () => {
    const response = await post(visitBody(v, { clientSiteId: 'NO-SUCH-SITE' }));
    expect(response.status).toBe(404);
    expect(response.body.type).toMatch(/not-found$/);
    expect(response.body.detail).toContain('NO-SUCH-SITE');
  });

  it("refuses another tenant's site with 404", async () => {
    expect((await post(visitBody(v, { clientSiteId: other.siteCode }))).status).toBe(404);
  });

  it('matches clientSiteId case-sensitively', async () => {
    expect((await post(visitBody(v, { clientSiteId: v.siteCode.toLowerCase() }))).status).toBe(404);
  });

  it('refuses an unknown itemName with 404', async () => {
    const response = await post(visitBody(v, { itemName: 'No such item' }));
    expect(response.status).toBe(404);
    expect(response.body.detail).toContain('No such item');
  });

  it("refuses another tenant's item with 404", async () => {
    expect((await post(visitBody(v, { itemName: other.itemName }))).status).toBe(404);
  });

  it('names items exactly (case-sensitive)', async () => {
    const item = await createItem(t, v.tenantId, { itemName: 'Printer XL' });
    expect((await post(visitBody(v, { itemName: item.itemName.toUpperCase() }))).status).toBe(404);
  });
});

describe('site assets on create (409 invalid-site-asset)', () => {
  it('refuses assets of another site of the tenant, naming them', async () => {
    const second = await createSiteWithAssets(t, v.tenantId, v.fullToken, 1);
    const response = await post(visitBody(v, { siteAssetIds: [v.assetIds[0], second.assetIds[0]] }));
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/invalid-site-asset$/);
    expect(response.body.detail).toContain(String(second.assetIds[0]));
    expect(response.body.errors).toEqual({ siteAssetIds: [expect.stringContaining(String(second.assetIds[0]))] });
  });

  it("refuses another tenant's assets and unknown ids, naming each", async () => {
    const response = await post(visitBody(v, { siteAssetIds: [other.assetIds[0], 123, v.assetIds[1]] }));
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/invalid-site-asset$/);
    expect(response.body.errors.siteAssetIds).toHaveLength(2);
    expect(response.body.detail).toContain(String(other.assetIds[0]));
    expect(response.body.detail).toContain('123');
    expect(response.body.detail).not.toContain(String(v.assetIds[1]));
  });
});

describe('duplicates', () => {
  it('refuses a second visit with the same clientTicketNumber with 409 duplicate-resource', async () => {
    await createVisit(t, v, { clientTicketNumber: 'DUP-1' });
    const response = await post(visitBody(v, { clientTicketNumber: 'DUP-1' }));
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/duplicate-resource$/);
  });

  it('lets exactly one of concurrent creates with the same ticket number win', async () => {
    const body = visitBody(v, { clientTicketNumber: 'RACE-1' });
    const responses = await Promise.all([post(body), post(body), post(body)]);
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409]);
  });
});

describe('GET /api/v1/site-visits', () => {
  it.each([
    [{ 'page[size]': 0 }, 'page[size]'],
    [{ 'page[size]': 101 }, 'page[size]'],
    [{ 'page[size]': 'x' }, 'page[size]'],
    [{ 'page[after]': 'not-a-cursor' }, 'page[after]'],
    [{ clientTicketNumber: '' }, 'clientTicketNumber'],
    [{ siteCode: 'S-1' }, 'siteCode'],
    [{ status: 'New' }, 'status'],
  ])('refuses %j with 422', async (query, field) => {
    expectValidation(await t.http.get('/api/v1/site-visits', { token: v.token, query }), [field]);
  });

  it('refuses a cursor of another list or another tenant', async () => {
    const sites = await t.http.get('/api/v1/sites', { token: v.fullToken, query: { 'page[size]': 1 } });
    await createSiteWithAssets(t, v.tenantId, v.fullToken, 0);
    const sitesCursor =
      (await t.http.get('/api/v1/sites', { token: v.fullToken, query: { 'page[size]': 1 } })).body.meta.nextCursor ??
      sites.body.meta.nextCursor;
    expectValidation(
      await t.http.get('/api/v1/site-visits', { token: v.token, query: { 'page[after]': sitesCursor } }),
      ['page[after]'],
    );

    await createVisit(t, other);
    await createVisit(t, other);
    const foreign = await t.http.get('/api/v1/site-visits', { token: other.token, query: { 'page[size]': 1 } });
    expect(foreign.body.meta.nextCursor).toEqual(expect.any(String));
    expectValidation(
      await t.http.get('/api/v1/site-visits', {
        token: v.token,
        query: { 'page[after]': foreign.body.meta.nextCursor },
      }),
      ['page[after]'],
    );
  });
});

describe('GET /api/v1/site-visits/{id}', () => {
  it('answers 404 for an unknown id', async () => {
    const response = await t.http.get('/api/v1/site-visits/visit_00000000000000000000000000', { token: v.token });
    expect(response.status).toBe(404);
    expect(response.body.type).toMatch(/not-found$/);
  });

  it('answers 405 for a method the path does not support', async () => {
    const response = await t.http.delete('/api/v1/site-visits/visit_00000000000000000000000000', { token: v.token });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toContain('PATCH');
  });
});
