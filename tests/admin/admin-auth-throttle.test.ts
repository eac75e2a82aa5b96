/**
 * Wrong operator tokens are counted per client address (ADMIN_AUTH_FAILURES_PER_MINUTE): past the limit, the
 * operator API refuses the address, the right token included, until the oldest wrong one is a minute old.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectProblem } from '../helpers/problems.js';

const LIMIT = 3;
const clock = new ManualClock();
let t: TestApp;
/** The same operator API behind a trusted proxy, so that requests can come from several addresses. */
let proxied: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock, config: { adminAuthFailuresPerMinute: LIMIT } });
  proxied = await startTestApp({
    clock,
    config: { adminAuthFailuresPerMinute: LIMIT, trustProxy: true },
    database: t.database,
    keys: t.keys,
  });
});
afterAll(async () => {
  await proxied?.close();
  await t?.close();
});
// Every test starts in a fresh minute (the window slides with the clock).
beforeEach(() => clock.advance(61_000));

const tenants = (app: TestApp, token: string | undefined, headers: Record<string, string> = {}) =>
  app.http.get('/admin/v1/tenants', { ...(token === undefined ? {} : { token }), headers });

function expectRefused(response: TestResponse): void {
  expectProblem(response, 429, 'rate-limit-exceeded');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe('operator API: wrong tokens from one address', () => {
  it(`after ${LIMIT} wrong tokens in a minute, every operator request from the address is 429, the right token too`, async () => {
    for (let index = 0; index < LIMIT; index++) expectProblem(await tenants(t, 'wrong-token'), 401, 'unauthorized');
    expectRefused(await tenants(t, 'wrong-token'));
    expectRefused(await tenants(t, t.adminToken));
    // The client API is not the operator API's to refuse.
    expect((await t.http.get('/health')).status).toBe(200);
  });

  it('the refusal ends once the oldest wrong token is a minute old', async () => {
    for (let index = 0; index < LIMIT; index++) await tenants(t, 'wrong-token');
    expectRefused(await tenants(t, t.adminToken));
    clock.advance(30_000);
    const refused = await tenants(t, t.adminToken);
    expectRefused(refused);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(31);
    clock.advance(31_000);
    expect((await tenants(t, t.adminToken)).status).toBe(200);
  });

  it('the right token and requests without one are not counted', async () => {
    for (let index = 0; index < LIMIT * 3; index++) {
      expect((await tenants(t, t.adminToken)).status).toBe(200);
      expectProblem(await tenants(t, undefined), 401, 'unauthorized');
    }
    for (let index = 0; index < LIMIT; index++) expectProblem(await tenants(t, 'wrong-token'), 401, 'unauthorized');
    expectRefused(await tenants(t, 'wrong-token'));
  });

  it('each address is counted apart', async () => {
    const from = (address: string) => ({ 'x-forwarded-for': address });
    for (let index = 0; index < LIMIT; index++) await tenants(proxied, 'wrong-token', from('203.0.113.7'));
    expectRefused(await tenants(proxied, proxied.adminToken, from('203.0.113.7')));
    expect((await tenants(proxied, proxied.adminToken, from('203.0.113.8'))).status).toBe(200);
  });
});
