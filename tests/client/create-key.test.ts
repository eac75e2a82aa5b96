/**
 * A create whose retries ran out (network failures, 5xx) may still have run: the error carries the
 * Idempotency-Key it was sent with, also one the client made up, so that the app repeats the create with
 * that key (SPEC Retry rules 2) and gets the one resource back instead of a second one.
 */
import { ApiError, type FetchLike, NetworkError } from '@site-services/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, startDroppingProxy } from '../helpers/client.js';
import { createTenant, siteBody } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** A fetch that answers every POST /api/v1/sites itself (or throws), recording its Idempotency-Key; the rest goes on. */
function answeringSiteCreates(answer: () => Response) {
  const sent: (string | null)[] = [];
  const fetchLike: FetchLike = async (request) => {
    if (request.method !== 'POST' || !request.url.endsWith('/api/v1/sites')) return fetch(request);
    sent.push(request.headers.get('idempotency-key'));
    return answer();
  };
  return { sent, fetch: fetchLike };
}

it('a create whose every answer was lost throws NetworkError with its key; repeated with it, the service replays', async () => {
  const tenant = await createTenant(t);
  const proxy = await startDroppingProxy(
    t.baseUrl,
    (request) => request.method === 'POST' && request.path === '/api/v1/sites',
  );
  try {
    const body = siteBody();
    const error = await clientFor({ ...t, baseUrl: proxy.baseUrl }, tenant, { retry: { maxAttempts: 2 } })
      .sites.create(body)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    const key = (error as NetworkError).idempotencyKey;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    const posts = proxy.requests.filter((request) => request.method === 'POST' && request.path === '/api/v1/sites');
    expect(posts.map((request) => [request.status, request.headers['idempotency-key']])).toEqual([
      [201, key],
      [201, key],
    ]);

    const again = await clientFor(t, tenant).sites.createWithDetails(body, { idempotencyKey: key! });
    expect(again).toMatchObject({ replayed: true, idempotencyKey: key });
    const sites = [];
    for await (const site of clientFor(t, tenant).sites.list({ siteCode: body.siteCode })) sites.push(site.id);
    expect(sites).toEqual([again.resource.id]);
  } finally {
    await proxy.close();
  }
});

it('a create answered 5xx until the retries ran out throws ApiError with its key; a key given is the one carried', async () => {
  const tenant = await createTenant(t);
  const { sent, fetch: unavailable } = answeringSiteCreates(() => {
    const problem = { type: 'x/service-unavailable', title: 'Unavailable', status: 503, detail: 'try later' };
    return new Response(JSON.stringify(problem), {
      status: 503,
      headers: { 'content-type': 'application/problem+json' },
    });
  });
  const client = clientFor(t, tenant, { fetch: unavailable, retry: { maxAttempts: 3 } });
  const error = await client.sites.create(siteBody()).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(503);
  expect(sent).toHaveLength(3);
  expect(new Set(sent).size).toBe(1);
  expect((error as ApiError).idempotencyKey).toBe(sent[0]);

  const given = await client.messages
    .create({ siteVisitId: 'visit_x', messageThread: 'x' }, { idempotencyKey: 'row-7' })
    .catch((caught: unknown) => caught);
  expect(given).toMatchObject({ status: 404, idempotencyKey: 'row-7' });
});

it('a create sent through client.api without a key gets one from the transport, carried by its NetworkError', async () => {
  const tenant = await createTenant(t);
  const { sent, fetch: offline } = answeringSiteCreates(() => {
    throw new TypeError('fetch failed');
  });
  const client = clientFor(t, tenant, { fetch: offline, retry: { maxAttempts: 2 } });
  const error = await client.api
    .POST('/api/v1/sites', { body: siteBody() as never })
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(NetworkError);
  expect(sent).toEqual([sent[0], sent[0]]);
  expect((error as NetworkError).idempotencyKey).toBe(sent[0]);
});
