import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let a: Awaited<ReturnType<typeof tenantWithToken>>;
let b: Awaited<ReturnType<typeof tenantWithToken>>;
let siteOfA: { id: string; attributes: Record<string, string> };
beforeAll(async () => {
  t = await startTestApp();
  a = await tenantWithToken(t);
  b = await tenantWithToken(t);
  siteOfA = (
    await t.http.post('/api/v1/sites', {
      token: a.token,
      json: siteBody({ uniqueID: 'A-LEGACY', uniqueID2: 'A-LEGACY-2' }),
    })
  ).body.data;
});
afterAll(async () => t?.close());

describe('tenant isolation', () => {
  it("tenant B gets 404 for tenant A's site on GET, exactly as for a missing id", async () => {
    const foreign = await t.http.get(`/api/v1/sites/${siteOfA.id}`, { token: b.token });
    expectProblem(foreign, 404, 'not-found');
    const missing = await t.http.get('/api/v1/sites/site_00000000000000000000000000', { token: b.token });
    expect(foreign.body.detail).toBe(missing.body.detail);
    expect(foreign.body.title).toBe(missing.body.title);
  });

  it('reads of the same site by two tenants at once (one statement for all of them) still answer the other tenant 404', async () => {
    const c = await tenantWithToken(t);
    const own = (await t.http.post('/api/v1/sites', { token: c.token, json: siteBody() })).body.data.id;
    const reads = Array.from({ length: 10 }, () => [
      t.http.get(`/api/v1/sites/${siteOfA.id}`, { token: a.token }),
      t.http.get(`/api/v1/sites/${siteOfA.id}`, { token: c.token }),
      t.http.get(`/api/v1/sites/${own}`, { token: c.token }),
    ]);
    for (const [ofA, foreign, ofB] of await Promise.all(reads.map((group) => Promise.all(group)))) {
      expect(ofA!.status).toBe(200);
      expectProblem(foreign!, 404, 'not-found');
      expect(ofB!.body.data.id).toBe(own);
    }
  });

  it("tenant B gets 404 for tenant A's site on PATCH, with or without If-Match, and A's site is unchanged", async () => {
    expectProblem(
      await t.http.patch(`/api/v1/sites/${siteOfA.id}`, { token: b.token, json: { name: 'Hijacked' } }),
      404,
      'not-found',
    );
    expectProblem(
      await t.http.patch(`/api/v1/sites/${siteOfA.id}`, {
        token: b.token,
        json: { name: 'Hijacked' },
        headers: { 'if-match': '"1"' },
      }),
      404,
      'not-found',
    );
    expectProblem(await t.http.patch(`/api/v1/sites/${siteOfA.id}`, { token: b.token, json: {} }), 404, 'not-found');
    const read = await t.http.get(`/api/v1/sites/${siteOfA.id}`, { token: a.token });
    expect(read.body.data.attributes.name).toBe(siteOfA.attributes.name);
    expect(read.body.data.meta.version).toBe(1);
  });

  it("tenant B never sees tenant A's sites in lists", async () => {
    const own = (await t.http.post('/api/v1/sites', { token: b.token, json: siteBody() })).body.data.id;
    const list = await t.http.get('/api/v1/sites', { token: b.token, query: { 'page[size]': 100 } });
    expect(list.body.data.map((site: { id: string }) => site.id)).toEqual([own]);
    for (const site of list.body.data) expect(site.attributes.clientId).toBe(b.tenantId);
  });

  it("filters do not leak another tenant's sites", async () => {
    for (const query of [
      { siteCode: siteOfA.attributes.siteCode },
      { uniqueID: 'A-LEGACY' },
      { uniqueID2: 'A-LEGACY-2' },
    ]) {
      const list = await t.http.get('/api/v1/sites', { token: b.token, query });
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([]);
      expect((await t.http.get('/api/v1/sites', { token: a.token, query })).body.data).toHaveLength(1);
    }
  });

  it("uniqueness of siteCode is per tenant: B may use A's siteCode, and a duplicate reveals nothing of A", async () => {
    const created = await t.http.post('/api/v1/sites', {
      token: b.token,
      json: siteBody({ siteCode: siteOfA.attributes.siteCode }),
    });
    expect(created.status).toBe(201);
    expect(created.body.data.id).not.toBe(siteOfA.id);
    expect(created.body.data.attributes.clientId).toBe(b.tenantId);
  });

  it('a body cannot choose the tenant', async () => {
    for (const field of ['clientId', 'tenantId']) {
      const response = await t.http.post('/api/v1/sites', { token: b.token, json: siteBody({ [field]: a.tenantId }) });
      expectProblem(response, 422, 'validation-error', [field]);
    }
  });

  it("A's idempotency keys do not replay A's sites to B", async () => {
    const body = siteBody();
    await t.http.post('/api/v1/sites', { token: a.token, json: body, headers: { 'idempotency-key': 'isolation' } });
    const fromB = await t.http.post('/api/v1/sites', {
      token: b.token,
      json: body,
      headers: { 'idempotency-key': 'isolation' },
    });
    expect(fromB.status).toBe(201);
    expect(fromB.headers.get('idempotent-replayed')).toBeNull();
    expect(fromB.body.data.attributes.clientId).toBe(b.tenantId);
  });
});

describe('every site route needs a token and its scope', () => {
  const routes: [string, string, boolean][] = [
    ['GET', '/api/v1/sites', false],
    ['POST', '/api/v1/sites', true],
    ['GET', '/api/v1/sites/site_x', false],
    ['PATCH', '/api/v1/sites/site_x', true],
  ];

  it.each(routes)('%s %s without a token is 401', async (method, path, write) => {
    const response = await t.http.request(method, path, write ? { json: siteBody() } : {});
    expectProblem(response, 401, 'unauthorized');
  });

  it.each(routes)('%s %s without its scope is 403', async (method, path, write) => {
    const other = await tenantWithToken(t, {
      scope: write ? 'sites:read site-visits:write' : 'sites:write site-visits:read',
    });
    const response = await t.http.request(method, path, { token: other.token, ...(write ? { json: siteBody() } : {}) });
    expectProblem(response, 403, 'forbidden');
    expect(response.body.detail).toContain(write ? 'sites:write' : 'sites:read');
  });
});
