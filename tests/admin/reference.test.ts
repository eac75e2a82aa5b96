import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { admin, createTenant, siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('projects', () => {
  it('creates projects with integer or string ids, Active by default, served back as given', async () => {
    const { tenantId } = await createTenant(t);
    const numeric = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, {
      projectId: 1001,
      projectName: 'Rollout',
    });
    expect(numeric.status).toBe(201);
    expect(numeric.body).toEqual({
      data: { projectId: 1001, projectName: 'Rollout', status: 'Active', upstreamRecordId: null },
    });
    const text = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, {
      projectId: 'PRJ-7',
      projectName: 'Refresh',
      status: 'Inactive',
      upstreamRecordId: 'a0B5g00000XyZ',
    });
    expect(text.status).toBe(201);
    expect(text.body.data).toEqual({
      projectId: 'PRJ-7',
      projectName: 'Refresh',
      status: 'Inactive',
      upstreamRecordId: 'a0B5g00000XyZ',
    });
    const listed = await admin(t, 'GET', `/admin/v1/tenants/${tenantId}/projects`);
    expect(listed.body.data).toEqual([numeric.body.data, text.body.data]);
  });

  it('a duplicate projectId is 409 duplicate-resource, 12 and "12" being the same id', async () => {
    const { tenantId } = await createTenant(t);
    await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, { projectId: 12, projectName: 'A' });
    expectProblem(
      await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, { projectId: 12, projectName: 'B' }),
      409,
      'duplicate-resource',
    );
    expectProblem(
      await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, { projectId: '12', projectName: 'C' }),
      409,
      'duplicate-resource',
    );
    // Another tenant may use the same id.
    const other = await createTenant(t);
    expect(
      (await admin(t, 'POST', `/admin/v1/tenants/${other.tenantId}/projects`, { projectId: 12, projectName: 'A' }))
        .status,
    ).toBe(201);
  });

  it('PATCH renames a project or deactivates it', async () => {
    const { tenantId } = await createTenant(t);
    await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, { projectId: 5, projectName: 'Old' });
    const inactive = await admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}/projects/5`, { status: 'Inactive' });
    expect(inactive.status).toBe(200);
    expect(inactive.body.data).toEqual({
      projectId: 5,
      projectName: 'Old',
      status: 'Inactive',
      upstreamRecordId: null,
    });
    const renamed = await admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}/projects/5`, {
      projectName: 'New',
      status: 'Active',
    });
    expect(renamed.body.data).toMatchObject({ projectName: 'New', status: 'Active' });
  });

  it("PATCH of an unknown project, or of another tenant's project, is 404", async () => {
    const a = await createTenant(t);
    const b = await createTenant(t);
    await admin(t, 'POST', `/admin/v1/tenants/${a.tenantId}/projects`, { projectId: 'P1', projectName: 'A' });
    expectProblem(
      await admin(t, 'PATCH', `/admin/v1/tenants/${a.tenantId}/projects/P2`, { status: 'Inactive' }),
      404,
      'not-found',
    );
    expectProblem(
      await admin(t, 'PATCH', `/admin/v1/tenants/${b.tenantId}/projects/P1`, { status: 'Inactive' }),
      404,
      'not-found',
    );
    expectProblem(
      await admin(t, 'PATCH', '/admin/v1/tenants/tnt_unknown/projects/P1', { status: 'Inactive' }),
      404,
      'not-found',
    );
    expect((await admin(t, 'GET', `/admin/v1/tenants/${a.tenantId}/projects`)).body.data[0].status).toBe('Active');
  });

  it.each([
    ['no projectId', { projectName: 'x' }, ['projectId']],
    ['no projectName', { projectId: 1 }, ['projectName']],
    ['negative projectId', { projectId: -1, projectName: 'x' }, ['projectId']],
    ['fractional projectId', { projectId: 1.5, projectName: 'x' }, ['projectId']],
    ['empty projectId', { projectId: '', projectName: 'x' }, ['projectId']],
    ['boolean projectId', { projectId: true, projectName: 'x' }, ['projectId']],
    ['unknown status', { projectId: 1, projectName: 'x', status: 'Closed' }, ['status']],
    ['unknown field', { projectId: 1, projectName: 'x', owner: 'me' }, ['owner']],
  ])('create with %s is 422', async (_label, body, fields) => {
    const { tenantId } = await createTenant(t);
    expectInvalid(await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, body), fields);
  });

  it.each([
    ['unknown status', { status: 'Archived' }, ['status']],
    ['projectId', { projectId: 2 }, ['projectId']],
    ['upstreamRecordId', { upstreamRecordId: 'x' }, ['upstreamRecordId']],
    ['null name', { projectName: null }, ['projectName']],
  ])('patch with %s is 422', async (_label, body, fields) => {
    const { tenantId } = await createTenant(t);
    await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, { projectId: 1, projectName: 'x' });
    expectInvalid(await admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}/projects/1`, body), fields);
  });

  it('create for an unknown tenant is 404', async () => {
    expectProblem(
      await admin(t, 'POST', '/admin/v1/tenants/tnt_unknown/projects', { projectId: 1, projectName: 'x' }),
      404,
      'not-found',
    );
  });
});

describe('items', () => {
  it('creates items with integer or string ids and lists them', async () => {
    const { tenantId } = await createTenant(t);
    const first = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, { itemId: 2001, itemName: 'Kiosk' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ data: { itemId: 2001, itemName: 'Kiosk', upstreamRecordId: null } });
    const second = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, {
      itemId: 'ITM-2',
      itemName: 'Sign',
      upstreamRecordId: 'up-1',
    });
    expect(second.body.data).toEqual({ itemId: 'ITM-2', itemName: 'Sign', upstreamRecordId: 'up-1' });
    expect((await admin(t, 'GET', `/admin/v1/tenants/${tenantId}/items`)).body.data).toEqual([
      first.body.data,
      second.body.data,
    ]);
  });

  it('a duplicate itemName or itemId is 409 duplicate-resource; names are per tenant', async () => {
    const { tenantId } = await createTenant(t);
    await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, { itemId: 1, itemName: 'Kiosk' });
    expectProblem(
      await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, { itemId: 2, itemName: 'Kiosk' }),
      409,
      'duplicate-resource',
    );
    expectProblem(
      await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, { itemId: '1', itemName: 'Other' }),
      409,
      'duplicate-resource',
    );
    expect(
      (await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, { itemId: 3, itemName: 'kiosk' })).status,
    ).toBe(201);
    const other = await createTenant(t);
    expect(
      (await admin(t, 'POST', `/admin/v1/tenants/${other.tenantId}/items`, { itemId: 1, itemName: 'Kiosk' })).status,
    ).toBe(201);
  });

  it.each([
    ['nothing', {}, ['itemId', 'itemName']],
    ['a long name', { itemId: 1, itemName: 'x'.repeat(201) }, ['itemName']],
    ['an unknown field', { itemId: 1, itemName: 'x', price: 3 }, ['price']],
  ])('create with %s is 422', async (_label, body, fields) => {
    const { tenantId } = await createTenant(t);
    expectInvalid(await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, body), fields);
  });

  it('create for an unknown tenant is 404', async () => {
    expectProblem(
      await admin(t, 'POST', '/admin/v1/tenants/tnt_unknown/items', { itemId: 1, itemName: 'x' }),
      404,
      'not-found',
    );
  });
});

describe('site assets', () => {
  const asset = (siteCode: string, index = 1) => ({
    siteCode,
    uniqueId: `ASSET-${index}`,
    friendlyLocation: 'Front entrance',
    assetStatus: 'Installed',
    assetDisplay: `Kiosk ${index}`,
  });

  it('adds assets to a site of the tenant with distinct integer ids, and lists them', async () => {
    const tenant = await tenantWithToken(t);
    const site = siteBody();
    await t.http.post('/api/v1/sites', { token: tenant.token, json: site });
    const first = await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/site-assets`, asset(site.siteCode, 1));
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ data: { siteAssetId: expect.any(Number), ...asset(site.siteCode, 1) } });
    expect(Number.isInteger(first.body.data.siteAssetId)).toBe(true);
    const second = await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/site-assets`, asset(site.siteCode, 2));
    expect(second.body.data.siteAssetId).not.toBe(first.body.data.siteAssetId);
    const listed = await t.http.get(`/admin/v1/tenants/${tenant.tenantId}/site-assets`, {
      token: t.adminToken,
      query: { siteCode: site.siteCode },
    });
    expect(listed.body.data).toEqual([first.body.data, second.body.data]);
  });

  it('an unknown siteCode, or one of another tenant, is 404', async () => {
    const a = await tenantWithToken(t);
    const b = await createTenant(t);
    const site = siteBody();
    await t.http.post('/api/v1/sites', { token: a.token, json: site });
    expectProblem(
      await admin(t, 'POST', `/admin/v1/tenants/${a.tenantId}/site-assets`, asset('NO-SUCH-SITE')),
      404,
      'not-found',
    );
    expectProblem(
      await admin(t, 'POST', `/admin/v1/tenants/${a.tenantId}/site-assets`, asset(site.siteCode.toLowerCase())),
      404,
      'not-found',
    );
    expectProblem(
      await admin(t, 'POST', `/admin/v1/tenants/${b.tenantId}/site-assets`, asset(site.siteCode)),
      404,
      'not-found',
    );
    expectProblem(
      await t.http.get(`/admin/v1/tenants/${b.tenantId}/site-assets`, {
        token: t.adminToken,
        query: { siteCode: site.siteCode },
      }),
      404,
      'not-found',
    );
    expectProblem(
      await admin(t, 'POST', '/admin/v1/tenants/tnt_unknown/site-assets', asset(site.siteCode)),
      404,
      'not-found',
    );
  });

  it('names every missing or unknown field', async () => {
    const { tenantId } = await createTenant(t);
    expectInvalid(await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/site-assets`, {}), [
      'siteCode',
      'uniqueId',
      'friendlyLocation',
      'assetStatus',
      'assetDisplay',
    ]);
    expectInvalid(
      await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/site-assets`, { ...asset('X'), siteAssetId: 5 }),
      ['siteAssetId'],
    );
    expectInvalid(await t.http.get(`/admin/v1/tenants/${tenantId}/site-assets`, { token: t.adminToken }), ['siteCode']);
  });
});
