import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('sites smoke', () => {
  it('creates and reads a site', async () => {
    const tenant = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody() });
    expect(created.status).toBe(201);
    const read = await t.http.get(`/api/v1/sites/${created.body.data.id}`, { token: tenant.token });
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe('"1"');
  });
});
