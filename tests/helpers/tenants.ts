/** Provisioning through the operator API, as a test's arrange step: a fresh tenant per test. */
import { randomUUID } from 'node:crypto';
import type { TestApp } from './app.js';

/** What provisioning needs of a running service: its HTTP client and the operator token. */
export type Operator = Pick<TestApp, 'http' | 'adminToken'>;

export interface TestTenant {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
}

export async function admin<T = any>(t: Operator, method: string, path: string, json?: unknown) {
  const response = await t.http.request<T>(method, path, {
    token: t.adminToken,
    ...(json !== undefined ? { json } : {}),
  });
  return response;
}

export async function createTenant(
  t: Operator,
  options: {
    scopes?: string[];
    apiEnabled?: boolean;
    webhookAccess?: boolean;
    maxActiveSubscriptions?: number;
    name?: string;
  } = {},
): Promise<TestTenant> {
  const response = await admin(t, 'POST', '/admin/v1/tenants', {
    name: options.name ?? `Tenant ${randomUUID().slice(0, 8)}`,
    ...options,
  });
  if (response.status !== 201) throw new Error(`tenant create failed: ${response.status} ${response.text}`);
  const data = response.body.data;
  return {
    tenantId: data.id,
    clientId: data.credentials.client_id,
    clientSecret: data.credentials.client_secret,
    scopes: data.scopes,
  };
}

export async function tokenFor(
  t: Pick<TestApp, 'http'>,
  tenant: Pick<TestTenant, 'clientId' | 'clientSecret'>,
  scope?: string,
): Promise<string> {
  const response = await t.http.post('/api/v1/oauth/token', {
    json: {
      grant_type: 'client_credentials',
      client_id: tenant.clientId,
      client_secret: tenant.clientSecret,
      ...(scope ? { scope } : {}),
    },
  });
  if (response.status !== 200) throw new Error(`token failed: ${response.status} ${response.text}`);
  return response.body.access_token;
}

/** A tenant with a token carrying all its scopes (or the given space-separated ones). */
export async function tenantWithToken(
  t: Operator,
  options: Parameters<typeof createTenant>[1] & { scope?: string } = {},
) {
  const { scope, ...tenantOptions } = options;
  const tenant = await createTenant(t, tenantOptions);
  const token = await tokenFor(t, tenant, scope);
  return { ...tenant, token };
}

export function siteBody(overrides: Record<string, unknown> = {}) {
  // 64 random bits: the reliability suites make tens of thousands of sites in one database, where 32 bits
  // collide about once in five runs (a duplicate siteCode is then a 409 the test did not expect).
  const code = `SITE-${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  return {
    name: `Store ${code}`,
    siteCode: code,
    addressLine1: '1 Main Street',
    city: 'Springfield',
    stateRegion: 'IL',
    postalCode: '62701',
    country: 'US',
    ...overrides,
  };
}
