/**
 * Every answer of the operator API carries tenant data for the operator's eyes, so every one is sent with
 * `Cache-Control: no-store` (one hook in the operator API's scope, headers.ts): success answers and
 * problems alike, the operator token's 401 and 429 included. The operator document declares it on every
 * response but the parser's (408, 431); the client API's caching is not changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARSER_STATUSES } from '../../src/http/openapi-implied.js';
import { clientOpenApiDocument, operatorOpenApiDocument } from '../../src/http/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectProblem } from '../helpers/problems.js';
import { admin, createTenant, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
/** The same operator API refusing an address after one wrong token. */
let strict: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  strict = await startTestApp({ config: { adminAuthFailuresPerMinute: 1 }, database: t.database, keys: t.keys });
});
afterAll(async () => {
  await strict?.close();
  await t?.close();
});

function expectNoStore(response: TestResponse, status: number): void {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('cache-control')).toBe('no-store');
}

describe('operator API: Cache-Control: no-store on every answer', () => {
  it('a list and a read', async () => {
    const { tenantId } = await createTenant(t);
    expectNoStore(await admin(t, 'GET', '/admin/v1/tenants'), 200);
    expectNoStore(await admin(t, 'GET', `/admin/v1/tenants/${tenantId}`), 200);
    expectNoStore(await admin(t, 'GET', `/admin/v1/tenants/${tenantId}/credentials`), 200);
    expectNoStore(await admin(t, 'GET', '/admin/v1/openapi.json'), 200);
  });

  it('a change', async () => {
    const { tenantId } = await createTenant(t);
    expectNoStore(await admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}`, { name: 'Renamed' }), 200);
  });

  it('problems: 404 for an unknown tenant, 422 for a bad body', async () => {
    const unknown = await admin(t, 'GET', '/admin/v1/tenants/tnt_unknown');
    expectProblem(unknown, 404, 'not-found');
    expectNoStore(unknown, 404);
    const invalid = await admin(t, 'POST', '/admin/v1/tenants', { name: 'x', scopes: ['no:such-scope'] });
    expect(invalid.status, invalid.text).toBe(422);
    expectNoStore(invalid, 422);
  });

  it('answers no route gives under its paths: an unknown path, a wrong method, a path the router refuses', async () => {
    expectNoStore(await admin(t, 'GET', '/admin/v1/no-such-thing'), 404);
    expectNoStore(await admin(t, 'DELETE', '/admin/v1/tenants'), 405);
    expectNoStore(await admin(t, 'GET', '/admin/v1/tenants/%E0%A4%A'), 400);
    expect((await t.http.get('/api/v1/no-such-thing')).headers.get('cache-control')).toBeNull();
  });

  it("the operator token's refusals: 401 without or with a wrong token, then 429", async () => {
    const missing = await t.http.get('/admin/v1/tenants');
    expectProblem(missing, 401, 'unauthorized');
    expectNoStore(missing, 401);
    const wrong = await strict.http.get('/admin/v1/tenants', { token: 'wrong-token' });
    expectNoStore(wrong, 401);
    const refused = await strict.http.get('/admin/v1/tenants', { token: strict.adminToken });
    expectProblem(refused, 429, 'rate-limit-exceeded');
    expectNoStore(refused, 429);
  });

  it('the client API is not changed: a read without a secret is not marked', async () => {
    const tenant = await tenantWithToken(t);
    const response = await t.http.get('/api/v1/sites', { token: tenant.token });
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('cache-control')).toBeNull();
  });
});

type Json = Record<string, any>;

function responses(document: Json): { where: string; status: string; response: Json }[] {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).flatMap(([method, operation]) =>
      Object.entries((operation as Json).responses as Json).map(([status, response]) => ({
        where: `${method.toUpperCase()} ${path} ${status}`,
        status,
        response: response as Json,
      })),
    ),
  );
}

describe('the documents', () => {
  it('the operator document declares Cache-Control: no-store, required, on every response but the parser’s', () => {
    const missing = responses(operatorOpenApiDocument(t.app))
      .filter(({ status }) => !PARSER_STATUSES.includes(Number(status) as never))
      .filter(({ response }) => {
        const header = response.headers?.['Cache-Control'];
        return header?.required !== true || header.schema?.const !== 'no-store';
      })
      .map(({ where }) => where);
    expect(missing).toEqual([]);
  });

  it('the client document declares it only where the answer carries a secret', () => {
    const declared = responses(clientOpenApiDocument(t.app))
      .filter(({ response }) => response.headers?.['Cache-Control'] !== undefined)
      .map(({ where }) => where);
    expect(declared.sort()).toEqual(['POST /api/v1/oauth/token 200', 'POST /api/v1/sandbox/webhook-listeners 201']);
  });
});
