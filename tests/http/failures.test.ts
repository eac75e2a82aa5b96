import { afterAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { type AppDatabase, openPostgres } from '../../src/db/database.js';
import { newSecret } from '../../src/lib/ids.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectOAuthError, expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

const SECRET_DETAIL = 'relation "secret_internal_table" at /srv/app/src/db.ts:12';

/** Fails every query, as a bug deep in the service would. */
class FailingPlugin implements KyselyPlugin {
  transformQuery(): never {
    throw new Error(SECRET_DETAIL);
  }
  async transformResult(): Promise<never> {
    throw new Error(SECRET_DETAIL);
  }
}

const opened: TestApp[] = [];
afterAll(async () => {
  for (const app of opened) await app.close().catch(() => undefined);
});

function expectNoInternals(response: TestResponse): void {
  for (const leak of [
    'secret_internal_table',
    '/srv/app',
    'destroyed',
    'ECONNREFUSED',
    'stack',
    'at async',
    'node_modules',
    'Error:',
  ]) {
    expect(response.text).not.toContain(leak);
  }
}

function tokenRequest(tenant: { clientId: string; clientSecret: string }) {
  return { json: { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret } };
}

describe('a database that is gone', () => {
  it('a closed database: 503 service-unavailable with Retry-After everywhere, never internals', async () => {
    const t = await startTestApp();
    opened.push(t);
    const tenant = await tenantWithToken(t);
    await t.database.close();

    const responses = {
      list: await t.http.get('/api/v1/sites', { token: tenant.token }),
      create: await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody() }),
      admin: await t.http.get('/admin/v1/tenants', { token: t.adminToken }),
      ready: await t.http.get('/ready'),
    };
    for (const response of Object.values(responses)) {
      expectProblem(response, 503, 'service-unavailable');
      expect(response.headers.get('retry-after')).toBe('5');
      expectNoInternals(response);
    }
    const token = await t.http.post('/api/v1/oauth/token', tokenRequest(tenant));
    expectOAuthError(token, 503, 'temporarily_unavailable', 'service-unavailable');
    expectNoInternals(token);
    // The process itself is alive.
    expect((await t.http.get('/health')).status).toBe(200);
  });

  it('an unreachable PostgreSQL: 503 service-unavailable, never internals', async () => {
    const database: AppDatabase = openPostgres('postgres://postgres@127.0.0.1:1/unreachable', 2);
    const t = await startTestApp({ database });
    opened.push(t);
    const tenant = await t.http.post('/admin/v1/tenants', { token: t.adminToken, json: { name: 'x' } });
    expectProblem(tenant, 503, 'service-unavailable');
    expect(tenant.headers.get('retry-after')).toBe('5');
    expectNoInternals(tenant);
    // A secret of the generated shape, so that the client is looked up (another is refused before the lookup).
    const token = await t.http.post(
      '/api/v1/oauth/token',
      tokenRequest({ clientId: 'cli_x', clientSecret: newSecret('secret') }),
    );
    expectOAuthError(token, 503, 'temporarily_unavailable');
    expectNoInternals(token);
    expectProblem(await t.http.get('/ready'), 503, 'service-unavailable');
    await database.close();
  });
});

describe('an unexpected failure', () => {
  it("is a bare 500 internal-error problem without the error's text", async () => {
    const healthy = await startTestApp();
    opened.push(healthy);
    const tenant = await tenantWithToken(healthy);
    // A second app on the same data whose every query fails unexpectedly.
    const broken = {
      ...healthy.database,
      db: healthy.database.db.withPlugin(new FailingPlugin()),
      close: async () => undefined,
    };
    const t = await startTestApp({ database: broken, keys: healthy.keys });
    opened.push(t);

    const list = await t.http.get('/api/v1/sites', { token: tenant.token });
    expectProblem(list, 500, 'internal-error');
    expect(list.body).toEqual({
      type: expect.any(String),
      title: 'Internal error',
      status: 500,
      detail: 'The service failed unexpectedly.',
    });
    expectNoInternals(list);
    const admin = await t.http.post('/admin/v1/tenants', { token: t.adminToken, json: { name: 'x' } });
    expectProblem(admin, 500, 'internal-error');
    expectNoInternals(admin);
    const token = await t.http.post('/api/v1/oauth/token', tokenRequest(tenant));
    expectOAuthError(token, 500, 'server_error', 'internal-error');
    expectNoInternals(token);
  });
});
