/**
 * The client paces itself against the real service's rate limit: it reads X-RateLimit-Remaining and
 * X-RateLimit-Reset and waits before the request that would be refused, so a run of requests beyond the
 * limit gets no 429. The service's clock and the client's are one manual clock that the client's sleeps
 * move on: nothing waits for real.
 */
import type { FetchLike } from '@site-services/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor } from '../helpers/client.js';
import { createTenant } from '../helpers/tenants.js';

const LIMIT = 4;
const clock = new ManualClock();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock, config: { rateLimitPerMinute: LIMIT } });
});
afterAll(async () => t?.close());

it('waits out the window instead of running into 429 once no request remains', async () => {
  const tenant = await createTenant(t);
  // createTenant spoke to the operator API only: the client's address starts with a full budget.
  clock.advance(61_000);
  const statuses: number[] = [];
  const sleeps: number[] = [];
  const recording: FetchLike = async (request) => {
    const response = await fetch(request);
    statuses.push(response.status);
    return response;
  };
  const client = clientFor(t, tenant, {
    fetch: recording,
    runtime: {
      now: () => clock.now().getTime(),
      sleep: async (ms) => {
        sleeps.push(ms);
        clock.advance(ms);
      },
    },
  });
  const started = clock.now().getTime();
  // The token request and three lookups spend the budget; three more lookups need the next window.
  for (let index = 0; index < 6; index++) expect(await client.sites.findBySiteCode(`none-${index}`)).toBeUndefined();
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
  expect(sleeps).toEqual([60_000]);
  expect(clock.now().getTime() - started).toBe(60_000);
});
