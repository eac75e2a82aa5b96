import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('GET /api/v1/projects', () => {
  it('lists the Active projects oldest first, ids in the form they were created with, never a cursor', async () => {
    const tenant = await tenantWithToken(t);
    await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/projects`, {
      projectId: 12,
      projectName: 'Rollout',
      upstreamRecordId: 'a0X000001',
    });
    await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/projects`, {
      projectId: 'PRJ-7',
      projectName: 'Refresh',
    });
    await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/projects`, {
      projectId: 13,
      projectName: 'Closed',
      status: 'Inactive',
    });

    const response = await t.http.get('/api/v1/projects', { token: tenant.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: '12',
          type: 'projects',
          attributes: { projectId: 12, projectName: 'Rollout', status: 'Active' },
          meta: { upstreamRecordId: 'a0X000001' },
        },
        {
          id: 'PRJ-7',
          type: 'projects',
          attributes: { projectId: 'PRJ-7', projectName: 'Refresh', status: 'Active' },
          meta: {},
        },
      ],
      meta: { pageSize: 25 },
    });
  });

  it('caps the list at page[size]', async () => {
    const tenant = await tenantWithToken(t);
    for (const projectId of [1, 2, 3])
      await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/projects`, {
        projectId,
        projectName: `P${projectId}`,
      });
    const response = await t.http.get('/api/v1/projects', { token: tenant.token, query: { 'page[size]': 2 } });
    expect(response.status).toBe(200);
    expect(response.body.data.map((project: { id: string }) => project.id)).toEqual(['1', '2']);
    expect(response.body.meta).toEqual({ pageSize: 2 });
  });

  it('shows a project deactivated by the operator no more', async () => {
    const tenant = await tenantWithToken(t);
    await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/projects`, { projectId: 5, projectName: 'Five' });
    await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}/projects/5`, { status: 'Inactive' });
    const response = await t.http.get('/api/v1/projects', { token: tenant.token });
    expect(response.body.data).toEqual([]);
  });
});

describe('GET /api/v1/items', () => {
  it('lists the items oldest first with upstreamRecordId when known', async () => {
    const tenant = await tenantWithToken(t);
    await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/items`, {
      itemId: 2001,
      itemName: 'Demo Kiosk',
      upstreamRecordId: 'a1Y0001',
    });
    await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/items`, { itemId: 'SKU-9', itemName: 'Sign' });

    const response = await t.http.get('/api/v1/items', { token: tenant.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: '2001',
          type: 'items',
          attributes: { itemId: 2001, itemName: 'Demo Kiosk' },
          meta: { upstreamRecordId: 'a1Y0001' },
        },
        { id: 'SKU-9', type: 'items', attributes: { itemId: 'SKU-9', itemName: 'Sign' }, meta: {} },
      ],
      meta: { pageSize: 25 },
    });
  });

  it('caps the list at page[size] and returns an empty list for a tenant without items', async () => {
    const tenant = await tenantWithToken(t);
    expect((await t.http.get('/api/v1/items', { token: tenant.token })).body).toEqual({
      data: [],
      meta: { pageSize: 25 },
    });
    for (const itemId of [1, 2])
      await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/items`, { itemId, itemName: `Item ${itemId}` });
    const response = await t.http.get('/api/v1/items', { token: tenant.token, query: { 'page[size]': 1 } });
    expect(response.body).toEqual({ data: [expect.objectContaining({ id: '1' })], meta: { pageSize: 1 } });
  });
});
