/**
 * SPEC's retry rules by kind of request, with answers put in place of the service's (503, 502, 429, 409
 * idempotency-pending, network failures) and the waits recorded: what is repeated, how often, and how long
 * the client waits before each repeat (Retry-After at least, then growing jittered backoff).
 */
import { ApiError, NetworkError, UncertainResultError } from '@site-services/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor } from '../helpers/client.js';
import { problem, recordedSleeps, recordingFetch } from '../helpers/client-fakes.js';
import { createTenant, siteBody } from '../helpers/tenants.js';

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
});
