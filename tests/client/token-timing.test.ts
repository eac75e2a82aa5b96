/**
 * A token's age after long waits (SPEC Authentication 8, Retry rules 5): the cache dates a token from the
 * attempt that got it, not from before its own 429 wait, and a request takes its token after the pacer's
 * wait, so no request goes out with a token that expired while it waited. The client's clock moves on
 * by its sleeps and by the test; nothing waits for real.
 */
import type { FetchLike } from '@site-services/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor } from '../helpers/client.js';
import { createTenant } from '../helpers/tenants.js';

/** TOKEN_TTL_SECONDS: 3600; the client renews a minute before expiry. */
const RENEW_AFTER_MS = 3_540_000;
const WAIT_MS = 100_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** A clock that stands still but for the test and the client's sleeps (waits are then exact). */
function manualRuntime() {
  const start = Date.now();
  const clock = { offset: 0, sleeps: [] as number[] };
  const runtime = {
    now: () => start + clock.offset,
    sleep: async (ms: number) => {
      clock.sleeps.push(ms);
      clock.offset += ms;
    },
  };
  return { clock, runtime };
}

/** Each request as "METHOD path bearer" (bearer: the token's last characters, or "-"). */
function recorder(answer: (request: Request) => Promise<Response>) {
  const log: string[] = [];
  const fetchLike: FetchLike = async (request) => {
    const bearer = request.headers.get('authorization')?.slice(-12) ?? '-';
    log.push(`${request.method} ${new URL(request.url).pathname} ${bearer}`);
    return answer(request);
  };
  return { log, fetch: fetchLike };
}

const tokenRequests = (log: string[]) => log.filter((entry) => entry.startsWith('POST /api/v1/oauth/token')).length;

it('dates a token from the attempt that got it, after a 429 wait on the token request', async () => {
  const tenant = await createTenant(t);
  const { clock, runtime } = manualRuntime();
  let refused = false;
  const { log, fetch: fetchLike } = recorder(async (request) => {
    if (request.url.endsWith('/oauth/token') && !refused) {
      refused = true;
      const problem = { type: 'x/rate-limit-exceeded', title: 'Too many', status: 429, detail: 'wait' };
      return new Response(JSON.stringify(problem), {
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': String(WAIT_MS / 1000) },
      });
    }
    return fetch(request);
  });
  const client = clientFor(t, tenant, { fetch: fetchLike, runtime });
  await client.sites.findBySiteCode('none');
  expect(clock.sleeps).toEqual([WAIT_MS]);
  expect(tokenRequests(log)).toBe(2);
  // Issued WAIT_MS after the first attempt: still fresh 30 s before its renewal, renewed 30 s after.
  clock.offset = WAIT_MS + RENEW_AFTER_MS - 30_000;
  await client.sites.findBySiteCode('none');
  expect(tokenRequests(log)).toBe(2);
  clock.offset += 60_000;
  await client.sites.findBySiteCode('none');
  expect(tokenRequests(log)).toBe(3);
});

it("takes a request's token after the pacer's wait, so the token cannot expire during it", async () => {
  const tenant = await createTenant(t);
  const { clock, runtime } = manualRuntime();
  let spend = false;
  const { log, fetch: fetchLike } = recorder(async (request) => {
    const response = await fetch(request);
    if (!spend || request.method !== 'GET') return response;
    // This answer says no request remains for WAIT_MS: the next request waits that long first.
    spend = false;
    const headers = new Headers(response.headers);
    headers.set('x-ratelimit-remaining', '0');
    headers.set('x-ratelimit-reset', String(WAIT_MS / 1000));
    return new Response(await response.arrayBuffer(), { status: response.status, headers });
  });
  const client = clientFor(t, tenant, { fetch: fetchLike, runtime });
  await client.sites.findBySiteCode('first');
  // The token is fresh now, and due for renewal in the middle of the coming wait.
  clock.offset = RENEW_AFTER_MS - WAIT_MS / 2;
  spend = true;
  await client.sites.findBySiteCode('second');
  await client.sites.findBySiteCode('third');
  expect(clock.sleeps).toEqual([WAIT_MS]);
  // The third lookup waited first, then found its token due and renewed it: not the one from before the wait.
  expect(log.map((entry) => entry.split(' ').slice(0, 2).join(' '))).toEqual([
    'POST /api/v1/oauth/token',
    'GET /api/v1/sites',
    'GET /api/v1/sites',
    'POST /api/v1/oauth/token',
    'GET /api/v1/sites',
  ]);
  const bearers = log.map((entry) => entry.split(' ')[2]);
  expect(bearers[2]).toBe(bearers[1]);
  expect(bearers[4]).not.toBe(bearers[2]);
});
