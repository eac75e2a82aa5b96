import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
/** Refused requests write nothing: one tenant serves them all. */
let shared: Awaited<ReturnType<typeof tenantWithToken>>;
beforeAll(async () => {
  t = await startTestApp();
  shared = await tenantWithToken(t);
});
afterAll(async () => t?.close());

describe.each(['/api/v1/projects', '/api/v1/items'])('GET %s', (path) => {
  it.each([
    [{ 'page[after]': 'abc' }, 'page[after]'],
    [{ 'page[size]': 0 }, 'page[size]'],
    [{ 'page[size]': 101 }, 'page[size]'],
    [{ 'page[size]': 'ten' }, 'page[size]'],
    [{ 'page[size]': 2.5 }, 'page[size]'],
    [{ status: 'Active' }, 'status'],
  ])('refuses %j with 422 naming the parameter', async (query, field) => {
    const response = await t.http.get(path, { token: shared.token, query });
    expect(response.status).toBe(422);
    expect(response.body.type).toMatch(/validation-error$/);
    expect(Object.keys(response.body.errors)).toEqual([field]);
  });

  it('needs a bearer token (401) with site-visits:read (403)', async () => {
    expect((await t.http.get(path)).status).toBe(401);
    const writeOnly = await tenantWithToken(t, { scope: 'site-visits:write sites:read' });
    const refused = await t.http.get(path, { token: writeOnly.token });
    expect(refused.status).toBe(403);
    expect(refused.body.type).toMatch(/forbidden$/);
  });

  it("never shows another tenant's records", async () => {
    const owner = await tenantWithToken(t);
    await admin(t, 'POST', `/admin/v1/tenants/${owner.tenantId}/projects`, { projectId: 77, projectName: 'Theirs' });
    await admin(t, 'POST', `/admin/v1/tenants/${owner.tenantId}/items`, { itemId: 77, itemName: 'Theirs' });
    const other = await tenantWithToken(t);
    const response = await t.http.get(path, { token: other.token });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([]);
  });
});
