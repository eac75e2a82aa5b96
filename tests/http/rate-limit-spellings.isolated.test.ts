/**
 * The rate limit decides on what the router routes, never on the raw request target (issue 15 item 2):
 * every spelling of a path under /api/v1 (percent-encoding, the absolute form, doubled slashes, dot
 * segments, a trailing slash, case, malformed paths) is counted, and refused once the budget is spent,
 * the token endpoint before any client secret is checked. Every answer under /api/v1 carries the
 * x-ratelimit-* headers; a burst at a window's edge is refused (a sliding window, not a fixed one).
 * Raw requests (helpers/raw-http.ts): fetch would normalise most of these spellings.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectOAuthError, expectProblem } from '../helpers/problems.js';
import { pathSpellings, rawRequest, type Spelling } from '../helpers/raw-http.js';
import { secretChecks } from '../helpers/secret-checks.js';
import { createTenant, tokenFor, type TestTenant } from '../helpers/tenants.js';

// Client secrets verified by the token endpoint, counted through the real function.
vi.mock('../../src/lib/secrets.js', async (importOriginal) =>
  (await import('../helpers/secret-checks.js')).countingSecrets(importOriginal),
);

const LIMIT = 5;
const clock = new ManualClock();
let t: TestApp;
let tenant: TestTenant;
let token: string;
let spellings: Spelling[];

beforeAll(async () => {
  t = await startTestApp({ clock, config: { rateLimitPerMinute: LIMIT } });
  tenant = await createTenant(t);
  token = await tokenFor(t, tenant);
  spellings = pathSpellings(tenant);
});
afterAll(async () => t?.close());
// Every test starts in a fresh minute (the limiter's window slides with the clock).
beforeEach(() => clock.advance(61_000));

const sites = () => t.http.get('/api/v1/sites', { token });
const send = (spelling: Spelling) => rawRequest(t.baseUrl, spelling);
const refusals = async () => (await t.metrics.rateLimitRefusals.get()).values[0]?.value ?? 0;

function expectHeaders(response: TestResponse, remaining: number, reset: number): void {
  expect(response.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
  expect(response.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
  expect(response.headers.get('x-ratelimit-reset')).toBe(String(reset));
}

function expectRefused(spelling: Spelling, response: TestResponse): void {
  expect(response.status, `${spelling.name}: ${spelling.method} ${spelling.target}`).toBe(429);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(response.headers.get('x-ratelimit-reset')).toBe(response.headers.get('retry-after'));
  if (spelling.method === 'HEAD') return;
  if (spelling.token) expectOAuthError(response, 429, 'temporarily_unavailable', 'rate-limit-exceeded');
  else expectProblem(response, 429, 'rate-limit-exceeded');
}

describe('every spelling of a path under /api/v1', () => {
  it('once the budget is spent, every spelling is refused, no secret is checked, and each refusal is counted', async () => {
    // The count works: the token request of beforeAll checked a secret.
    expect(secretChecks.count).toBeGreaterThan(0);
    for (let index = 0; index < LIMIT; index++) expect((await sites()).status).toBe(200);
    const refusedBefore = await refusals();
    const checksBefore = secretChecks.count;
    for (const spelling of spellings) expectRefused(spelling, await send(spelling));
    expect(secretChecks.count - checksBefore).toBe(0);
    expect((await refusals()) - refusedBefore).toBe(spellings.length);
  });

  it('each spelling counts like the plain path: after the limit in that spelling, the plain path is refused', async () => {
    for (const spelling of spellings) {
      clock.advance(61_000);
      for (let index = 0; index < LIMIT; index++) {
        const response = await send(spelling);
        expect(response.status, `${spelling.name} #${index + 1}`).not.toBe(429);
        expect(response.headers.get('x-ratelimit-remaining'), spelling.name).toBe(String(LIMIT - 1 - index));
      }
      expectProblem(await sites(), 429, 'rate-limit-exceeded');
    }
  });

  it('outside /api/v1 nothing is counted, however it is spelled', async () => {
    const outside = [
      '/health',
      'http://any/health',
      '/%68ealth',
      '/api/v1/../../health',
      '/admin/v1/tenants',
      '/api/v10',
    ];
    for (let round = 0; round < 2 * LIMIT; round++) {
      for (const target of outside) {
        const response = await rawRequest(t.baseUrl, { method: 'GET', target });
        expect(response.status).not.toBe(429);
        expect(response.headers.get('x-ratelimit-limit'), target).toBeNull();
      }
    }
    expect((await sites()).status).toBe(200);
  });
});

describe('x-ratelimit-* headers', () => {
  it('every answer under /api/v1 says the limit, what remains and when the window resets, 429 included', async () => {
    expectHeaders(await sites(), LIMIT - 1, 60);
    clock.advance(10_000);
    expectHeaders(await t.http.get('/api/v1/sites'), LIMIT - 2, 50);
    expectHeaders(await t.http.get('/api/v1/no-such-thing'), LIMIT - 3, 50);
    expectHeaders(await t.http.post('/api/v1/sites', { token, json: {} }), LIMIT - 4, 50);
    expectHeaders(await t.http.post('/api/v1/oauth/token', { json: {} }), 0, 50);
    clock.advance(20_000);
    const refused = await sites();
    expect(refused.status).toBe(429);
    expectHeaders(refused, 0, 30);
    expect(refused.headers.get('retry-after')).toBe('30');
    const token429 = await t.http.post('/api/v1/oauth/token', { json: {} });
    expect(token429.status).toBe(429);
    expectHeaders(token429, 0, 30);
    // When the oldest request leaves the window, remaining grows by what it held.
    clock.advance(30_000);
    expectHeaders(await sites(), 0, 10);
  });
});

describe('sliding window', () => {
  it('a burst at the edge of a clock minute: the next request just after the edge is still refused', async () => {
    const edge = Math.ceil((clock.now().getTime() + 1_000) / 60_000) * 60_000;
    clock.set(new Date(edge - 200));
    for (let index = 0; index < LIMIT; index++) expect((await sites()).status).toBe(200);
    clock.set(new Date(edge + 100));
    const refused = await sites();
    expectProblem(refused, 429, 'rate-limit-exceeded');
    expect(refused.headers.get('retry-after')).toBe('60');
    // A minute after the burst, and not before, the budget is back.
    clock.set(new Date(edge + 59_700));
    expect((await sites()).status).toBe(429);
    clock.set(new Date(edge + 59_800));
    expect((await sites()).status).toBe(200);
  });
});
