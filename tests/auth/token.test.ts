import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, siteBody, type TestTenant } from '../helpers/tenants.js';

const TOKEN = '/api/v1/oauth/token';
const ALL = 'sites:read sites:write site-visits:read site-visits:write webhooks:read webhooks:write';

let t: TestApp;
// A clock that stands still: every token of this file is issued in the same second.
const clock = new ManualClock();
beforeAll(async () => {
  t = await startTestApp({ clock, config: { tokenTtlSeconds: 900 } });
});
afterAll(async () => t?.close());

function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
  return { header, payload };
}

function credentials(tenant: TestTenant) {
  return { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret };
}

function basic(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
}

function expectTokenResponse(response: Awaited<ReturnType<TestApp['http']['post']>>, scope: string) {
  expect(response.status, response.text).toBe(200);
  expect(response.contentType).toMatch(/^application\/json/);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, scope });
}

describe('POST /api/v1/oauth/token', () => {
  it('issues a token for a JSON body', async () => {
    const tenant = await createTenant(t);
    const response = await t.http.post(TOKEN, { json: credentials(tenant) });
    expectTokenResponse(response, ALL);
    const site = await t.http.post('/api/v1/sites', { token: response.body.access_token, json: siteBody() });
    expect(site.status).toBe(201);
    expect(site.body.data.attributes.clientId).toBe(tenant.tenantId);
  });

  it('issues a token for a form-encoded body', async () => {
    const tenant = await createTenant(t);
    const response = await t.http.post(TOKEN, { body: new URLSearchParams(credentials(tenant)) });
    expectTokenResponse(response, ALL);
    expect((await t.http.get('/api/v1/sites', { token: response.body.access_token })).status).toBe(200);
  });

  it('accepts HTTP Basic client authentication, with JSON or form bodies', async () => {
    const tenant = await createTenant(t);
    const headers = { authorization: basic(tenant.clientId, tenant.clientSecret) };
    expectTokenResponse(
      await t.http.post(TOKEN, { headers, body: new URLSearchParams({ grant_type: 'client_credentials' }) }),
      ALL,
    );
    expectTokenResponse(
      await t.http.post(TOKEN, { headers, json: { grant_type: 'client_credentials', scope: 'sites:read' } }),
      'sites:read',
    );
  });

  it('ignores unrecognised parameters', async () => {
    const tenant = await createTenant(t);
    expectTokenResponse(
      await t.http.post(TOKEN, { json: { ...credentials(tenant), audience: 'x', resource: 'y' } }),
      ALL,
    );
  });

  it('signs an EdDSA at+jwt whose issuer and audience name the environment and whose lifetime is TOKEN_TTL_SECONDS', async () => {
    const tenant = await createTenant(t);
    const response = await t.http.post(TOKEN, { json: credentials(tenant) });
    const { header, payload } = decodeJwt(response.body.access_token);
    expect(header).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt', kid: t.keys.tokenKeyId });
    expect(payload).toMatchObject({
      iss: 'site-services/sandbox',
      aud: 'site-services-api/sandbox',
      sub: tenant.clientId,
      tid: tenant.tenantId,
      scope: ALL,
      iat: Math.floor(clock.now().getTime() / 1000),
      nbf: Math.floor(clock.now().getTime() / 1000),
      exp: Math.floor(clock.now().getTime() / 1000) + 900,
    });
    expect(payload.jti).toEqual(expect.any(String));
    // The token carries no secret.
    expect(JSON.stringify(payload)).not.toContain(tenant.clientSecret);
  });

  it('issues a distinct token each time, also within one second', async () => {
    const tenant = await createTenant(t);
    const responses = await Promise.all([1, 2, 3].map(() => t.http.post(TOKEN, { json: credentials(tenant) })));
    const tokens = responses.map((response) => response.body.access_token as string);
    expect(new Set(tokens).size).toBe(3);
    const payloads = tokens.map((token) => decodeJwt(token).payload);
    expect(new Set(payloads.map((payload) => payload.iat)).size).toBe(1);
    expect(new Set(payloads.map((payload) => payload.jti)).size).toBe(3);
  });

  it('narrows the grant to the requested scopes', async () => {
    const tenant = await createTenant(t);
    const response = await t.http.post(TOKEN, { json: { ...credentials(tenant), scope: 'sites:read  sites:read' } });
    expectTokenResponse(response, 'sites:read');
    const token = response.body.access_token;
    expect((await t.http.get('/api/v1/sites', { token })).status).toBe(200);
    expect((await t.http.post('/api/v1/sites', { token, json: siteBody() })).status).toBe(403);

    const two = await t.http.post(TOKEN, { json: { ...credentials(tenant), scope: 'sites:write sites:read' } });
    expectTokenResponse(two, 'sites:write sites:read');
    expect((await t.http.post('/api/v1/sites', { token: two.body.access_token, json: siteBody() })).status).toBe(201);
  });

  it("grants all of the tenant's scopes when scope is omitted or empty", async () => {
    const tenant = await createTenant(t, { scopes: ['sites:read', 'webhooks:read'] });
    expectTokenResponse(await t.http.post(TOKEN, { json: credentials(tenant) }), 'sites:read webhooks:read');
    expectTokenResponse(
      await t.http.post(TOKEN, { json: { ...credentials(tenant), scope: '' } }),
      'sites:read webhooks:read',
    );
  });

  it('works with every credential pair of a tenant', async () => {
    const tenant = await createTenant(t);
    const added = await t.http.post(`/admin/v1/tenants/${tenant.tenantId}/credentials`, { token: t.adminToken });
    expect(added.status).toBe(201);
    const second = { clientId: added.body.data.client_id, clientSecret: added.body.data.client_secret } as TestTenant;
    expectTokenResponse(await t.http.post(TOKEN, { json: credentials(second) }), ALL);
    expectTokenResponse(await t.http.post(TOKEN, { json: credentials(tenant) }), ALL);
  });
});
