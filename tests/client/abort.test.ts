/**
 * A caller's abort signal ends a call as it ends fetch: before anything is sent, during an attempt, during a
 * retry wait, a pacer wait or the wait for a token, the call rejects with the signal's reason (an AbortError
 * by default), unwrapped and never repeated; an attempt's own time limit is still a failure that is retried.
 * Concurrent callers share one token request: one that aborts stops waiting alone, and the request is
 * abandoned (nothing cached) only once every waiter has aborted. Against a service of the test's own (the
 * injected fetch answers everything), with waits that end only when the test says, so no test depends on a
 * clock.
 */
import {
  createClient,
  type ClientOptions,
  type FetchLike,
  NetworkError,
  SiteServicesError,
} from '@site-services/client';
import { describe, expect, it } from 'vitest';
import { heldSleeps, problem } from '../helpers/client-fakes.js';

const SITES = '/api/v1/sites';
const TOKEN = '/api/v1/oauth/token';

/** Answers what `answer` leaves: tokens (numbered), empty site lists and created sites. */
function fakeService(
  answer: (request: Request) => Promise<Response | undefined> | Response | undefined = () => undefined,
) {
  const requests: Request[] = [];
  let issued = 0;
  const fetchLike: FetchLike = async (request) => {
    requests.push(request);
    const answered = await answer(request);
    if (answered) return answered;
    if (new URL(request.url).pathname === TOKEN)
      return Response.json({ access_token: `token-${++issued}`, token_type: 'Bearer', expires_in: 3600 });
    if (request.method === 'POST') return Response.json({ data: { id: 'site_1' } }, { status: 201 });
    return Response.json({ data: [], meta: {} });
  };
  const sent = (method: string, path: string) =>
    requests.filter((request) => request.method === method && new URL(request.url).pathname === path);
  return { fetch: fetchLike, requests, sent };
}

/** What fetch does with a request nobody answers: rejects with its signal's reason once it aborts. */
const unanswered = (request: Request) =>
  new Promise<Response>((_, reject) =>
    request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }),
  );

const clientOf = (service: { fetch: FetchLike }, options: Partial<ClientOptions> = {}) =>
  createClient({
    baseUrl: 'http://127.0.0.1:9',
    clientId: 'cli_test',
    clientSecret: 'secret',
    fetch: service.fetch,
    ...options,
  });

/** The rejection of `call`, which must reject. */
const rejection = (call: Promise<unknown>) =>
  call.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => error,
  );

function expectAbortError(error: unknown) {
  expect(error).toBeInstanceOf(DOMException);
  expect((error as DOMException).name).toBe('AbortError');
  expect(error).not.toBeInstanceOf(SiteServicesError);
}

describe("the transport honours the caller's abort signal", () => {
  it('aborted before the call, nothing is sent (not even a token request)', async () => {
    const service = fakeService();
    const client = clientOf(service);
    const signal = AbortSignal.abort();
    expectAbortError(await rejection(client.api.GET(SITES, { signal })));
    expect(service.requests).toEqual([]);
  });

  it('aborted during a retry wait, the wait ends at once and no further attempt is made', async () => {
    const service = fakeService((request) =>
      request.method === 'GET' ? problem(503, 'service-unavailable') : undefined,
    );
    const { sleeps, runtime, started } = heldSleeps();
    const client = clientOf(service, { runtime });
    const controller = new AbortController();
    const call = rejection(client.api.GET(SITES, { signal: controller.signal }));
    await started();
    controller.abort();
    // The sleep was never released: only the abort can have ended the wait.
    expectAbortError(await call);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]!.signal?.aborted).toBe(true);
    // The wait's end, coming late, starts nothing either.
    sleeps[0]!.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(service.sent('GET', SITES)).toHaveLength(1);
    expect(sleeps).toHaveLength(1);
  });

  it("aborted during an attempt, that attempt's fetch is aborted; the reason given is the one thrown", async () => {
    const service = fakeService((request) => (request.method === 'GET' ? unanswered(request) : undefined));
    const { sleeps, runtime } = heldSleeps();
    const client = clientOf(service, { runtime });
    const controller = new AbortController();
    const call = rejection(client.api.GET(SITES, { signal: controller.signal }));
    await expect.poll(() => service.sent('GET', SITES).length).toBe(1);
    const reason = new Error('the user went away');
    controller.abort(reason);
    expect(await call).toBe(reason);
    expect(service.sent('GET', SITES)[0]!.signal.aborted).toBe(true);
    expect(sleeps).toEqual([]);
  });

  it('an attempt that runs out of its own time limit is still retried as a network failure', async () => {
    let attempts = 0;
    const service = fakeService((request) =>
      request.method === 'GET' && ++attempts === 1 ? unanswered(request) : undefined,
    );
    const { sleeps, runtime, started } = heldSleeps();
    const client = clientOf(service, { runtime, timeoutMs: 50 });
    const controller = new AbortController();
    const call = client.api.GET(SITES, { signal: controller.signal });
    await started();
    expect(service.sent('GET', SITES)[0]!.signal.reason).toMatchObject({ name: 'TimeoutError' });
    sleeps[0]!.release();
    const { response } = await call;
    expect(response.status).toBe(200);
    expect(service.sent('GET', SITES)).toHaveLength(2);
  });

  it('a create aborted during its attempt rejects with the AbortError, not a NetworkError, and is not repeated', async () => {
    const service = fakeService((request) =>
      request.method === 'POST' && request.url.endsWith(SITES) ? unanswered(request) : undefined,
    );
    const { sleeps, runtime } = heldSleeps();
    const client = clientOf(service, { runtime });
    const controller = new AbortController();
    const call = rejection(
      client.api.POST(SITES, {
        body: {} as never,
        params: { header: { 'Idempotency-Key': 'row-1' } },
        signal: controller.signal,
      }),
    );
    await expect.poll(() => service.sent('POST', SITES).length).toBe(1);
    controller.abort();
    const error = await call;
    expectAbortError(error);
    expect(error).not.toBeInstanceOf(NetworkError);
    expect(service.sent('POST', SITES)).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('aborted while it waits for its token, the call ends, and so does the token request nobody else waits for', async () => {
    const service = fakeService((request) => (request.url.endsWith(TOKEN) ? unanswered(request) : undefined));
    const client = clientOf(service);
    const controller = new AbortController();
    const call = rejection(client.api.GET(SITES, { signal: controller.signal }));
    await expect.poll(() => service.sent('POST', TOKEN).length).toBe(1);
    controller.abort();
    expectAbortError(await call);
    expect(service.sent('POST', TOKEN)[0]!.signal.aborted).toBe(true);
    expect(service.sent('GET', SITES)).toEqual([]);
  });

  it("aborted during the pacer's wait (no request left in the window), the wait ends at once", async () => {
    let spent = false;
    const service = fakeService((request) => {
      if (request.method !== 'GET' || spent) return undefined;
      spent = true;
      return Response.json(
        { data: [], meta: {} },
        { headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60' } },
      );
    });
    const { sleeps, runtime, started } = heldSleeps();
    const client = clientOf(service, { runtime });
    await client.api.GET(SITES);
    const controller = new AbortController();
    const call = rejection(client.api.GET(SITES, { signal: controller.signal }));
    await started();
    expect(sleeps[0]!.ms).toBeGreaterThan(50_000);
    controller.abort();
    expectAbortError(await call);
    expect(service.sent('GET', SITES)).toHaveLength(1);
  });
});

describe('a token request shared by callers that may abort', () => {
  it('one of two waiters aborts: it alone stops waiting, and the other gets the one token requested', async () => {
    let answerToken: () => void = () => undefined;
    const service = fakeService((request) =>
      request.url.endsWith(TOKEN)
        ? new Promise<undefined>((resolve) => {
            answerToken = () => resolve(undefined);
          })
        : undefined,
    );
    const client = clientOf(service);
    const leaving = new AbortController();
    const first = rejection(client.token({ signal: leaving.signal }));
    const second = client.token({ signal: new AbortController().signal });
    await expect.poll(() => service.sent('POST', TOKEN).length).toBe(1);
    leaving.abort();
    expectAbortError(await first);
    expect(service.sent('POST', TOKEN)[0]!.signal.aborted).toBe(false);
    answerToken();
    expect(await second).toBe('token-1');
    expect(await client.token()).toBe('token-1');
    expect(service.sent('POST', TOKEN)).toHaveLength(1);
  });

  it('every waiter aborts: the request is aborted, nothing is cached, and the next token() requests anew', async () => {
    let tokenRequests = 0;
    const service = fakeService((request) =>
      request.url.endsWith(TOKEN) && ++tokenRequests === 1 ? unanswered(request) : undefined,
    );
    const client = clientOf(service);
    const controllers = [new AbortController(), new AbortController()];
    const waiting = controllers.map((controller) => rejection(client.token({ signal: controller.signal })));
    await expect.poll(() => service.sent('POST', TOKEN).length).toBe(1);
    controllers[0]!.abort();
    expect(service.sent('POST', TOKEN)[0]!.signal.aborted).toBe(false);
    controllers[1]!.abort();
    for (const error of await Promise.all(waiting)) expectAbortError(error);
    expect(service.sent('POST', TOKEN)[0]!.signal.aborted).toBe(true);

    // The token fetched next is the second request's (the first was answered by nobody, and nothing cached).
    expect(await client.token()).toBe('token-1');
    expect(service.sent('POST', TOKEN)).toHaveLength(2);
  });
});

describe('every helper takes the signal (options.signal) and passes it to its request', () => {
  /** Each helper call, started with `signal`, against a service that never answers anything but a token. */
  const calls: [string, (client: ReturnType<typeof clientOf>, signal: AbortSignal) => Promise<unknown>][] = [
    ['sites.get', (client, signal) => client.sites.get('site_1', { signal })],
    ['sites.create', (client, signal) => client.sites.create({} as never, { signal })],
    ['sites.update', (client, signal) => client.sites.update('site_1', {} as never, { signal })],
    ['sites.list', (client, signal) => client.sites.list({}, { signal }).next()],
    ['sites.findBySiteCode', (client, signal) => client.sites.findBySiteCode('A-1', { signal })],
    [
      'siteVisits.findByClientTicketNumber',
      (client, signal) => client.siteVisits.findByClientTicketNumber('T', { signal }),
    ],
    [
      'siteVisits.uploadReturnLabel',
      (client, signal) => client.siteVisits.uploadReturnLabel('visit_1', new Uint8Array([1]), { signal }),
    ],
    [
      'messages.uploadAttachment',
      (client, signal) => client.messages.uploadAttachment('msg_1', new Uint8Array([1]), { signal }),
    ],
    ['webhookSubscriptions.list', (client, signal) => client.webhookSubscriptions.list({ signal })],
    ['webhookSubscriptions.create', (client, signal) => client.webhookSubscriptions.create({} as never, { signal })],
    ['webhookSubscriptions.update', (client, signal) => client.webhookSubscriptions.update('whsub_1', {}, { signal })],
    ['projects', (client, signal) => client.projects(10, { signal })],
    ['items', (client, signal) => client.items(undefined, { signal })],
    ['getRaw', (client, signal) => client.getRaw('/api/v1/sites', { signal })],
  ];

  it.each(calls)('%s: aborted while its request is under way, it rejects with the reason', async (_name, call) => {
    const service = fakeService((request) =>
      new URL(request.url).pathname === TOKEN ? undefined : unanswered(request),
    );
    const client = clientOf(service, { runtime: heldSleeps().runtime });
    const controller = new AbortController();
    const result = rejection(call(client, controller.signal));
    await expect
      .poll(() => service.requests.filter((request) => new URL(request.url).pathname !== TOKEN).length)
      .toBe(1);
    const reason = new Error('stopped by the caller');
    controller.abort(reason);
    expect(await result).toBe(reason);
  });
});
