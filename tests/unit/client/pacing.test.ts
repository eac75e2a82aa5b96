/**
 * The client paces itself by the rate-limit headers (packages/client/src/pacing.ts), through its
 * transport, with a fake fetch and a fake clock: nothing waits for real.
 */
import { describe, expect, it } from 'vitest';
import { RateLimitPacer } from '../../../packages/client/src/pacing.js';
import { DEFAULT_RETRY, type Runtime } from '../../../packages/client/src/retry.js';
import { createTransport, type FetchLike } from '../../../packages/client/src/transport.js';

const BASE = 'http://service.test';

/** A clock that sleeping moves forward; the sleeps are recorded. */
function fakeRuntime(): Runtime & { sleeps: number[]; advance(ms: number): void } {
  let now = Date.UTC(2026, 0, 1);
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    random: () => 0.5,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** Answers in turn; each request is recorded with the time it was sent. */
function scriptedFetch(runtime: Runtime, answers: (() => Response)[]) {
  const sent: number[] = [];
  const fetchLike: FetchLike = async () => {
    sent.push(runtime.now());
    const answer = answers[sent.length - 1];
    if (!answer) throw new Error('no answer scripted');
    return answer();
  };
  return { fetch: fetchLike, sent };
}

const ok = (remaining: number, reset: number) => () =>
  new Response('{}', {
    status: 200,
    headers: {
      'content-type': 'application/json',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(reset),
    },
  });
const limited =
  (retryAfter: number, rateLimitHeaders = true) =>
  () =>
    new Response('{"status":429}', {
      status: 429,
      headers: {
        'content-type': 'application/problem+json',
        'retry-after': String(retryAfter),
        ...(rateLimitHeaders
          ? { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(retryAfter) }
          : {}),
      },
    });

function transport(runtime: Runtime, fetchLike: FetchLike, pacer = new RateLimitPacer(runtime, 120_000)) {
  return createTransport({ fetch: fetchLike, runtime, retry: DEFAULT_RETRY, timeoutMs: 30_000, pacer });
}
const get = (send: FetchLike, path = '/api/v1/sites') => send(new Request(`${BASE}${path}`));

describe('pacing by X-RateLimit-Remaining and X-RateLimit-Reset', () => {
  it('sends at once while requests remain, and waits the reset once none remains', async () => {
    const runtime = fakeRuntime();
    const script = scriptedFetch(runtime, [ok(2, 60), ok(1, 59), ok(0, 42), ok(99, 60), ok(98, 60)]);
    const send = transport(runtime, script.fetch);
    for (let index = 0; index < 3; index++) expect((await get(send)).status).toBe(200);
    expect(runtime.sleeps).toEqual([]);
    expect((await get(send)).status).toBe(200);
    // The fourth request waited the 42 s announced by the third answer, and no more.
    expect(runtime.sleeps).toEqual([42_000]);
    expect(script.sent[3]! - script.sent[2]!).toBe(42_000);
    await get(send);
    expect(runtime.sleeps).toEqual([42_000]);
  });

  it('time that passed on its own counts: only the rest of the reset is waited', async () => {
    const runtime = fakeRuntime();
    const script = scriptedFetch(runtime, [ok(0, 30), ok(5, 60)]);
    const send = transport(runtime, script.fetch);
    await get(send);
    runtime.advance(25_000);
    await get(send);
    expect(runtime.sleeps).toEqual([5_000]);
  });

  it('a 429 is retried after its Retry-After, and holds back the next requests as well', async () => {
    const runtime = fakeRuntime();
    // Without rate-limit headers: Retry-After alone holds the next request back.
    const script = scriptedFetch(runtime, [limited(20, false), ok(3, 60), limited(30), ok(0, 10), ok(50, 60)]);
    const pacer = new RateLimitPacer(runtime, 120_000);
    const send = transport(runtime, script.fetch, pacer);
    expect((await get(send)).status).toBe(200);
    // The retry waited at least Retry-After (the retry rules), and the pacer added nothing on top.
    expect(script.sent[1]! - script.sent[0]!).toBeGreaterThanOrEqual(20_000);
    expect((await get(send)).status).toBe(200);
    expect(script.sent[3]! - script.sent[2]!).toBeGreaterThanOrEqual(30_000);
    // The answer to the retry said 0 remain for 10 s: the next request waits them.
    const before = runtime.now();
    await get(send);
    expect(script.sent[4]! - before).toBe(10_000);
  });

  it('a 429 answered to one request holds back another request sent meanwhile (one pacer per client)', async () => {
    const runtime = fakeRuntime();
    const pacer = new RateLimitPacer(runtime, 120_000);
    const first = scriptedFetch(runtime, [limited(15)]);
    const second = scriptedFetch(runtime, [ok(10, 60)]);
    // The first transport gives up at once (one attempt): its 429 still informs the pacer.
    await createTransport({
      fetch: first.fetch,
      runtime,
      retry: { ...DEFAULT_RETRY, maxAttempts: 1 },
      timeoutMs: 30_000,
      pacer,
    })(new Request(`${BASE}/api/v1/oauth/token`, { method: 'POST', body: '{}' }));
    await get(transport(runtime, second.fetch, pacer));
    expect(second.sent[0]! - first.sent[0]!).toBe(15_000);
  });

  it('does not honour a wait beyond its bound, nor unreadable or missing headers', async () => {
    const runtime = fakeRuntime();
    const pacer = new RateLimitPacer(runtime, 120_000);
    pacer.observe(200, new Headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '86400' }), undefined);
    pacer.observe(200, new Headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': 'soon' }), undefined);
    pacer.observe(200, new Headers({ 'x-ratelimit-remaining': '0' }), undefined);
    pacer.observe(200, new Headers({ 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '60' }), undefined);
    expect(await pacer.wait()).toBe(0);
    // Answers of concurrent requests arrive in any order: a shorter hold never shortens a longer one.
    pacer.observe(200, new Headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '40' }), undefined);
    pacer.observe(200, new Headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '5' }), undefined);
    expect(await pacer.wait()).toBe(40_000);
    expect(await pacer.wait()).toBe(0);
  });
});
