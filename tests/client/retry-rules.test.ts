/**
 * SPEC's retry rules by kind of request, with answers put in place of the service's (503, 502, 429, 408, 409
 * idempotency-pending, network failures) and the waits recorded: what is repeated, how often, and how long
 * the client waits before each repeat (Retry-After at least, then growing jittered backoff).
 */
import { ApiError, NetworkError, UncertainResultError } from '@site-services/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor } from '../helpers/client.js';
import { problem, recordedSleeps, recordingFetch } from '../helpers/client-fakes.js';
import { pdfBytes } from '../helpers/multipart.js';
import { createTenant, siteBody } from '../helpers/tenants.js';
import { createVisit, visitTenant } from '../helpers/visits.js';

const TOKEN = 'POST /api/v1/oauth/token';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('retry rules', () => {
  it('GETs ride out 503, 429 and network failures, waiting at least Retry-After, with growing jittered waits', async () => {
    const tenant = await createTenant(t);
    const { sleeps, runtime } = recordedSleeps();
    const failures = [
      problem(503, 'service-unavailable', { 'retry-after': '3' }),
      problem(429, 'rate-limit-exceeded', { 'retry-after': '2' }),
      new TypeError('fetch failed'),
    ];
    const recorder = recordingFetch((request) => (request.method === 'GET' ? failures.shift() : undefined));
    const client = clientFor(t, tenant, {
      fetch: recorder.fetch,
      runtime,
      retry: { baseDelayMs: 100, maxDelayMs: 1_000 },
    });
    expect(await client.sites.findBySiteCode('nothing')).toBeUndefined();
    expect(recorder.paths().filter((entry) => entry.startsWith('GET'))).toHaveLength(4);
    expect(sleeps[0]).toBeGreaterThanOrEqual(3_000);
    expect(sleeps[1]).toBeGreaterThanOrEqual(2_000);
    // The third wait is the backoff alone: half of 100 * 2^2 plus up to as much again.
    expect(sleeps[2]).toBeGreaterThanOrEqual(200);
    expect(sleeps[2]).toBeLessThanOrEqual(400);
  });

  it('gives up after maxAttempts, and does not wait for a Retry-After beyond its bound', async () => {
    const tenant = await createTenant(t);
    const { sleeps, runtime } = recordedSleeps();
    const recorder = recordingFetch((request) => (request.method === 'GET' ? problem(502, 'bad-gateway') : undefined));
    const client = clientFor(t, tenant, { fetch: recorder.fetch, runtime, retry: { maxAttempts: 3 } });
    const error = await client.sites.get('site_x').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    expect(sleeps).toHaveLength(2);

    const patient = recordingFetch((request) =>
      request.method === 'GET' ? problem(429, 'rate-limit-exceeded', { 'retry-after': '3600' }) : undefined,
    );
    const limited = await clientFor(t, tenant, { fetch: patient.fetch, runtime })
      .sites.get('site_x')
      .catch((caught: unknown) => caught);
    expect((limited as ApiError).slug).toBe('rate-limit-exceeded');
    expect(sleeps).toHaveLength(2);

    const offline = recordingFetch((request) => (request.method === 'GET' ? new TypeError('fetch failed') : undefined));
    await expect(
      clientFor(t, tenant, { fetch: offline.fetch, runtime, retry: { maxAttempts: 2 } }).sites.get('site_x'),
    ).rejects.toBeInstanceOf(NetworkError);
  });

  it('a PATCH is repeated after 429 (refused before it ran) but never after 5xx', async () => {
    const tenant = await createTenant(t);
    const site = await clientFor(t, tenant).sites.create(siteBody());
    const { runtime } = recordedSleeps();
    const answers = [problem(429, 'rate-limit-exceeded', { 'retry-after': '1' })];
    const recorder = recordingFetch((request) => (request.method === 'PATCH' ? answers.shift() : undefined));
    const client = clientFor(t, tenant, { fetch: recorder.fetch, runtime });
    expect((await client.sites.update(site.id, { city: 'Ogdenville' })).attributes.city).toBe('Ogdenville');
    answers.push(problem(500, 'internal-error'));
    const error = await client.sites.update(site.id, { city: 'North Haverbrook' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UncertainResultError);
    expect((error as UncertainResultError).problem?.status).toBe(500);
    expect(recorder.paths().filter((entry) => entry.startsWith('PATCH'))).toHaveLength(3);
  });

  it('a create is repeated on 409 idempotency-pending and 5xx with its key, and a key the caller gives is the one sent', async () => {
    const tenant = await createTenant(t);
    const { runtime } = recordedSleeps();
    const answers = [problem(409, 'idempotency-pending', { 'retry-after': '1' }), problem(503, 'service-unavailable')];
    const recorder = recordingFetch((request) =>
      request.method === 'POST' && request.url.endsWith('/sites') ? answers.shift() : undefined,
    );
    const client = clientFor(t, tenant, { fetch: recorder.fetch, runtime });
    const created = await client.sites.createWithDetails(siteBody(), { idempotencyKey: 'row-42' });
    expect(created).toMatchObject({ idempotencyKey: 'row-42', replayed: false });
    const keys = recorder.requests
      .filter((request) => request.method === 'POST' && request.url.endsWith('/sites'))
      .map((request) => request.headers.get('idempotency-key'));
    expect(keys).toEqual(['row-42', 'row-42', 'row-42']);
  });

  it('GETs, creates and token requests ride out 408 (the request did not arrive in time: nothing was done) like 503', async () => {
    const tenant = await createTenant(t);
    const { sleeps, runtime } = recordedSleeps();
    const timedOut = (headers?: Record<string, string>) => problem(408, 'request-timeout', headers);
    const answers: Record<string, Response[]> = {
      [TOKEN]: [timedOut()],
      'GET /api/v1/sites': [timedOut({ 'retry-after': '2' })],
      'POST /api/v1/sites': [timedOut(), timedOut()],
    };
    const recorder = recordingFetch((request) =>
      answers[`${request.method} ${new URL(request.url).pathname}`]?.shift(),
    );
    const client = clientFor(t, tenant, {
      fetch: recorder.fetch,
      runtime,
      retry: { baseDelayMs: 100, maxDelayMs: 1_000 },
    });
    expect(await client.sites.findBySiteCode('nothing')).toBeUndefined();
    const created = await client.sites.createWithDetails(siteBody(), { idempotencyKey: 'timed-out-1' });
    expect(created).toMatchObject({ idempotencyKey: 'timed-out-1', replayed: false });
    expect(recorder.paths()).toEqual([
      TOKEN,
      TOKEN,
      'GET /api/v1/sites',
      'GET /api/v1/sites',
      'POST /api/v1/sites',
      'POST /api/v1/sites',
      'POST /api/v1/sites',
    ]);
    expect(
      recorder.requests
        .filter((request) => request.method === 'POST')
        .map((request) => request.headers.get('idempotency-key')),
    ).toEqual([null, null, 'timed-out-1', 'timed-out-1', 'timed-out-1']);
    expect(sleeps).toHaveLength(4);
    // Retry-After is the least wait, as after a 503; without it, the backoff alone (half of 100 plus up to as much).
    expect(sleeps[1]).toBeGreaterThanOrEqual(2_000);
    for (const index of [0, 2]) {
      expect(sleeps[index]).toBeGreaterThanOrEqual(50);
      expect(sleeps[index]).toBeLessThanOrEqual(100);
    }
  });

  it('a PATCH or an upload answered 408 is not repeated: the ApiError goes back, the caller repeats a write', async () => {
    const v = await visitTenant(t, { assets: 0 });
    const visit = await createVisit(t, v);
    const recorder = recordingFetch((request) =>
      request.method === 'PATCH' || request.url.endsWith('/return-label') ? problem(408, 'request-timeout') : undefined,
    );
    const client = clientFor(t, v, { fetch: recorder.fetch, runtime: recordedSleeps().runtime });
    for (const write of [
      client.siteVisits.update(visit.id, { description: 'Timed out' }),
      client.siteVisits.uploadReturnLabel(visit.id, pdfBytes()),
    ]) {
      const error = await write.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).slug).toBe('request-timeout');
    }
    expect(recorder.paths().filter((entry) => !entry.startsWith(TOKEN))).toEqual([
      `PATCH /api/v1/site-visits/${visit.id}`,
      `POST /api/v1/site-visits/${visit.id}/return-label`,
    ]);
  });
});
