import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectOAuthError, expectProblem } from '../helpers/problems.js';
import { rawRequest } from '../helpers/raw-http.js';
import { createTenant, tokenFor, type TestTenant } from '../helpers/tenants.js';

const LIMIT = 5;
const clock = new ManualClock();
let t: TestApp;
/** A second app on the same data that trusts X-Forwarded-For, so requests can come from several addresses. */
let proxied: TestApp;
let tenant: TestTenant;
let token: string;

beforeAll(async () => {
  t = await startTestApp({ clock, config: { rateLimitPerMinute: LIMIT } });
  proxied = await startTestApp({
    clock,
    config: { rateLimitPerMinute: LIMIT, trustProxy: true },
    database: t.database,
    keys: t.keys,
  });
  tenant = await createTenant(t);
  token = await tokenFor(t, tenant);
});
afterAll(async () => {
  await proxied?.close();
  await t?.close();
});
// Every test starts in a fresh minute (the limiter's window slides with the clock).
beforeEach(() => clock.advance(61_000));

function expectLimited(response: TestResponse): void {
  expectProblem(response, 429, 'rate-limit-exceeded');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

const sites = (app: TestApp = t, headers: Record<string, string> = {}) =>
  app.http.get('/api/v1/sites', { token, headers });

describe('rate limit per client address', () => {
  it(`request ${LIMIT + 1} within one minute is 429 rate-limit-exceeded with Retry-After`, async () => {
    for (let index = 0; index < LIMIT; index++) expect((await sites()).status).toBe(200);
    const refused = await sites();
    expectLimited(refused);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('x-request-id')).toBeTruthy();
  });

  it('Retry-After tells when the oldest counted request leaves the window, and then requests pass again', async () => {
    expect((await sites()).status).toBe(200);
    clock.advance(20_000);
    for (let index = 1; index < LIMIT; index++) expect((await sites()).status).toBe(200);
    clock.advance(10_000);
    const refused = await sites();
    expectLimited(refused);
    expect(refused.headers.get('retry-after')).toBe('30');
    clock.advance(30_000);
    expect((await sites()).status).toBe(200);
    expectLimited(await sites());
  });

  it('counts every request under /api/v1: errors, unknown paths and the token endpoint', async () => {
    expect((await t.http.get('/api/v1/sites')).status).toBe(401);
    expect((await t.http.get('/api/v1/no-such-thing')).status).toBe(404);
    expect((await t.http.get('/api/v1?probe=1')).status).toBe(404);
    expect((await t.http.post('/api/v1/oauth/token', { json: {} })).status).toBe(400);
    expect((await t.http.post('/api/v1/sites', { token, json: {} })).status).toBe(422);
    expectLimited(await sites());
    expectLimited(await t.http.get('/api/v1/no-such-thing'));
  });

  it('the token endpoint answers 429 in its OAuth format: temporarily_unavailable with Retry-After', async () => {
    for (let index = 0; index < LIMIT; index++) await sites();
    const response = await t.http.post('/api/v1/oauth/token', {
      json: { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret },
    });
    expectOAuthError(response, 429, 'temporarily_unavailable', 'rate-limit-exceeded');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('does not count /health, /ready or the operator API, and they answer while the limit is reached', async () => {
    for (let index = 0; index < 3 * LIMIT; index++) {
      await t.http.get('/health');
      await t.http.get('/ready');
      await t.http.get('/admin/v1/tenants', { token: t.adminToken });
      await t.http.get('/nope');
    }
    for (let index = 0; index < LIMIT; index++) expect((await sites()).status).toBe(200);
    expectLimited(await sites());
    expect((await t.http.get('/health')).status).toBe(200);
    expect((await t.http.get('/ready')).status).toBe(200);
    expect((await t.http.get(`/admin/v1/tenants/${tenant.tenantId}`, { token: t.adminToken })).status).toBe(200);
  });

  it('refused requests are not counted: waiting out Retry-After is enough', async () => {
    for (let index = 0; index < LIMIT; index++) await sites();
    for (let index = 0; index < 20; index++) expectLimited(await sites());
    clock.advance(60_000);
    expect((await sites()).status).toBe(200);
  });

  it('X-Forwarded-For is ignored unless TRUST_PROXY says so', async () => {
    for (let index = 0; index < LIMIT; index++) await sites(t, { 'x-forwarded-for': `203.0.113.${index}` });
    expectLimited(await sites(t, { 'x-forwarded-for': '198.51.100.1' }));
  });

  it('behind a trusted proxy each client address has its own budget', async () => {
    const from = (address: string) => sites(proxied, { 'x-forwarded-for': address });
    for (let index = 0; index < LIMIT; index++) expect((await from('203.0.113.7')).status).toBe(200);
    expectLimited(await from('203.0.113.7'));
    expect((await from('203.0.113.8')).status).toBe(200);
    // Each process counts for itself: the other app's budget for 127.0.0.1 is untouched.
    expect((await sites(t)).status).toBe(200);
  });

  it('behind a trusted proxy, the addresses of one IPv6 /64 share a budget (one host has them all)', async () => {
    const from = (address: string) => sites(proxied, { 'x-forwarded-for': address });
    // A host picking another address of its /64 for each request (found by a hostile-tenant probe).
    for (let index = 0; index < LIMIT; index++) expect((await from(`2001:db8:7:1::${index + 1}`)).status).toBe(200);
    expectLimited(await from('2001:db8:7:1:ffff:ffff:ffff:ffff'));
    expectLimited(await from('2001:0db8:0007:0001:0:0:0:99'));
    expect((await from('2001:db8:7:2::1')).status).toBe(200);
    // An IPv4-mapped IPv6 address is its IPv4 address.
    for (let index = 0; index < LIMIT; index++) expect((await from('203.0.113.20')).status).toBe(200);
    expectLimited(await from('::ffff:203.0.113.20'));
  });

  it('behind a trusted proxy, a path the router refuses counts against the client address, not the proxy', async () => {
    const malformed = (address: string) =>
      rawRequest(proxied.baseUrl, {
        method: 'GET',
        target: '/%61pi/v1/sites/%zz',
        headers: { 'x-forwarded-for': address },
      });
    for (let index = 0; index < LIMIT; index++) expect((await malformed('203.0.113.9')).status).toBe(400);
    expectLimited(await malformed('203.0.113.9'));
    expect((await malformed('203.0.113.10')).status).toBe(400);
    expect((await sites(proxied, { 'x-forwarded-for': '203.0.113.11' })).status).toBe(200);
  });
});
