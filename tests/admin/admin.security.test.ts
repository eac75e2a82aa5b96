import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServerKeys } from '../../src/runtime/server-keys.js';
import { startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { createTenant, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let tenantId: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ tenantId } = await createTenant(t));
});
afterAll(async () => t?.close());

/** Every operator route, with a body where it takes one. */
const routes = (tenant: string): [string, string, unknown?][] => [
  ['GET', '/admin/v1/tenants'],
  ['POST', '/admin/v1/tenants', { name: 'x' }],
  ['GET', `/admin/v1/tenants/${tenant}`],
  ['PATCH', `/admin/v1/tenants/${tenant}`, { name: 'x' }],
  ['GET', `/admin/v1/tenants/${tenant}/credentials`],
  ['POST', `/admin/v1/tenants/${tenant}/credentials`],
  ['DELETE', `/admin/v1/tenants/${tenant}/credentials/cli_x`],
  ['GET', `/admin/v1/tenants/${tenant}/projects`],
  ['POST', `/admin/v1/tenants/${tenant}/projects`, { projectId: 1, projectName: 'x' }],
  ['PATCH', `/admin/v1/tenants/${tenant}/projects/1`, { status: 'Inactive' }],
  ['GET', `/admin/v1/tenants/${tenant}/items`],
  ['POST', `/admin/v1/tenants/${tenant}/items`, { itemId: 1, itemName: 'x' }],
  ['GET', `/admin/v1/tenants/${tenant}/site-assets?siteCode=X`],
  [
    'POST',
    `/admin/v1/tenants/${tenant}/site-assets`,
    { siteCode: 'X', uniqueId: 'u', friendlyLocation: 'f', assetStatus: 's', assetDisplay: 'd' },
  ],
  ['POST', `/admin/v1/tenants/${tenant}/site-visits`, { clientSiteId: 'X' }],
  ['GET', '/admin/v1/site-visits/visit_x'],
  ['POST', '/admin/v1/site-visits/visit_x/workflow', { action: 'dispatch' }],
  [
    'POST',
    `/admin/v1/tenants/${tenant}/webhook-subscriptions`,
    { targetUrl: 'https://example.com/', eventTypes: ['ticket.created'] },
  ],
  ['GET', `/admin/v1/tenants/${tenant}/webhook-subscriptions`],
  ['GET', '/admin/v1/deliveries'],
  ['POST', '/admin/v1/deliveries/dlv_x/retry'],
];

describe('operator API authentication', () => {
  it('every route is 401 without the admin token, before validation', async () => {
    for (const [method, path, json] of routes(tenantId)) {
      const response = await t.http.request(method, path, json === undefined ? {} : { json });
      expectProblem(response, 401, 'unauthorized');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="site-services-operator"');
    }
    // A malformed body does not get past authentication either.
    expectProblem(
      await t.http.post('/admin/v1/tenants', { body: '{', headers: { 'content-type': 'application/json' } }),
      401,
      'unauthorized',
    );
  });

  it.each([
    ['a wrong token', () => ({ authorization: 'Bearer adm_wrong' })],
    ['the token with a suffix', () => ({ authorization: `Bearer ${t.adminToken}x` })],
    ['a prefix of the token', () => ({ authorization: `Bearer ${t.adminToken.slice(0, -1)}` })],
    ['the token in another scheme', () => ({ authorization: `Basic ${t.adminToken}` })],
    ['the token without a scheme', () => ({ authorization: t.adminToken })],
    ['the token in another header', () => ({ 'x-admin-token': t.adminToken })],
  ])('%s is 401', async (_label, headers) => {
    for (const [method, path, json] of routes(tenantId).slice(0, 4)) {
      expectProblem(
        await t.http.request(method, path, { headers: headers(), ...(json === undefined ? {} : { json }) }),
        401,
        'unauthorized',
      );
    }
  });

  it('a client access token is not an operator token, and the operator token is not a client token', async () => {
    const client = await tenantWithToken(t);
    expectProblem(await t.http.get('/admin/v1/tenants', { token: client.token }), 401, 'unauthorized');
    expectProblem(await t.http.get('/api/v1/sites', { token: t.adminToken }), 401, 'unauthorized');
  });

  it('unknown operator paths are 404 problems', async () => {
    expectProblem(await t.http.get('/admin/v1/nothing', { token: t.adminToken }), 404, 'not-found');
    expectProblem(await t.http.get('/admin/v1/nothing'), 404, 'not-found');
  });
});

describe('production', () => {
  it('without ADMIN_TOKEN the operator API does not exist (404 on every route)', async () => {
    const config = testConfig({ environment: 'production' });
    const production = await startTestApp({
      config,
      database: t.database,
      keys: { ...generateServerKeys(config), adminToken: undefined },
    });
    try {
      for (const [method, path, json] of routes(tenantId)) {
        expectProblem(
          await production.http.request(method, path, { token: t.adminToken, ...(json === undefined ? {} : { json }) }),
          404,
          'not-found',
        );
        expectProblem(
          await production.http.request(method, path, json === undefined ? {} : { json }),
          404,
          'not-found',
        );
      }
      // The client API is there.
      expectProblem(await production.http.get('/api/v1/sites'), 401, 'unauthorized');
    } finally {
      await production.close();
    }
  });

  it('with ADMIN_TOKEN the operator API answers', async () => {
    const config = testConfig({ environment: 'production', adminToken: 'production-operator-token-1234' });
    const production = await startTestApp({ config, database: t.database });
    try {
      expect(production.adminToken).toBe('production-operator-token-1234');
      expect(
        (await production.http.get(`/admin/v1/tenants/${tenantId}`, { token: 'production-operator-token-1234' }))
          .status,
      ).toBe(200);
      expectProblem(await production.http.get('/admin/v1/tenants', { token: t.adminToken }), 401, 'unauthorized');
    } finally {
      await production.close();
    }
  });
});
