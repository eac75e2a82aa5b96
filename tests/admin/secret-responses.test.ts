/**
 * Answers that carry a secret are sent with `Cache-Control: no-store` (adversarial probe): a new tenant's
 * first credential pair, a further pair, a sandbox webhook listener's signing secret, an access token. The
 * documents are walked too: every success answer whose body has a secret member declares the header, so an
 * operation added later cannot leave it out unnoticed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOpenApiDocument, operatorOpenApiDocument } from '../../src/http/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { admin, createTenant, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

function expectNoStore(response: TestResponse, status: number): void {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('cache-control')).toBe('no-store');
}

describe('Cache-Control: no-store on answers that carry a secret', () => {
  it('a new tenant with its client_secret', async () => {
    const response = await admin(t, 'POST', '/admin/v1/tenants', { name: 'Cached Nowhere' });
    expectNoStore(response, 201);
    expect(response.body.data.credentials.client_secret).toMatch(/^secret_/);
  });

  it('a further credential pair', async () => {
    const { tenantId } = await createTenant(t);
    const response = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/credentials`);
    expectNoStore(response, 201);
    expect(response.body.data.client_secret).toMatch(/^secret_/);
  });

  it('a sandbox webhook listener with its signing secret, and the token it was opened with', async () => {
    const tenant = await tenantWithToken(t);
    const listener = await t.http.post('/api/v1/sandbox/webhook-listeners', { token: tenant.token, json: {} });
    expectNoStore(listener, 201);
    expect(listener.body.data.secret).toEqual(expect.any(String));
    const token = await t.http.post('/api/v1/oauth/token', {
      json: { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret },
    });
    expectNoStore(token, 200);
  });

  it('client API answers without a secret are not marked (operator answers all are: no-store.test.ts)', async () => {
    const tenant = await tenantWithToken(t);
    for (const path of ['/api/v1/sites', '/api/v1/webhook-subscriptions']) {
      const response = await t.http.get(path, { token: tenant.token });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('cache-control'), path).toBeNull();
    }
  });
});

type Json = Record<string, any>;
const SECRET_MEMBER = /secret|access_token/i;

/** Whether a schema (following the document's component references) has a member named like a secret. */
function carriesSecret(document: Json, schema: unknown, seen = new Set<unknown>()): boolean {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return false;
  seen.add(schema);
  const node = schema as Json;
  const name = /^#\/components\/schemas\/(.+)$/.exec(node.$ref ?? '')?.[1];
  if (name !== undefined) return carriesSecret(document, document.components.schemas[name], seen);
  if (Object.keys(node.properties ?? {}).some((member) => SECRET_MEMBER.test(member))) return true;
  return Object.values(node).some((child) => carriesSecret(document, child, seen));
}

/** `METHOD path status` of each success answer with a secret in its body, and whether it declares no-store. */
function secretAnswers(document: Json): { where: string; noStore: boolean }[] {
  const found: { where: string; noStore: boolean }[] = [];
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      for (const [status, answer] of Object.entries((operation as Json).responses ?? {}) as [string, Json][]) {
        if (!status.startsWith('2') || !carriesSecret(document, answer.content)) continue;
        // Headers are named in their documented form (Cache-Control).
        const header = Object.entries(answer.headers ?? {}).find(([name]) => name.toLowerCase() === 'cache-control');
        const schema = (header?.[1] as Json | undefined)?.schema;
        found.push({ where: `${method.toUpperCase()} ${path} ${status}`, noStore: schema?.const === 'no-store' });
      }
    }
  }
  return found;
}

describe('the documents', () => {
  it('every success answer with a secret in its body declares Cache-Control: no-store', () => {
    const answers = [
      ...secretAnswers(clientOpenApiDocument(t.app) as Json),
      ...secretAnswers(operatorOpenApiDocument(t.app) as Json),
    ];
    expect(answers.map((answer) => answer.where)).toEqual(
      expect.arrayContaining([
        'POST /api/v1/oauth/token 200',
        'POST /api/v1/sandbox/webhook-listeners 201',
        'POST /admin/v1/tenants 201',
        'POST /admin/v1/tenants/{tenantId}/credentials 201',
      ]),
    );
    expect(answers.filter((answer) => !answer.noStore)).toEqual([]);
  });
});
