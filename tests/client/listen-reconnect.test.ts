/**
 * `svc listen` when a stream cannot be opened: a remembered listener (a restart) or a dropped stream (a
 * reconnect) keeps its listener, and so its signing secret, through failures of the moment (the service
 * answering 503 or 429, connections reset), retrying with backoff; only the service's word that the
 * listener is gone (404: closed, or another tenant's) replaces a remembered one, with a note that the
 * secret changed, and ends a held one; opening a listener (the first or a replacement) is retried the same
 * way. Ctrl-C ends a wait at once, the client's own (its token request's retries) too, and the close after
 * it gives up in time against a service that cannot be reached. In process against the real app,
 * through a proxy that fails the stream's requests a counted number of times; the app's clock stands
 * still, so no listener outlives its grace by the machine being slow.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { heldSleeps } from '../helpers/client-fakes.js';
import { type Failure, type FlakyProxy, type ProxiedCall, startFlakyProxy } from '../helpers/flaky-proxy.js';
import { tenantWithToken } from '../helpers/tenants.js';
import { ListenHarness, type ListenRun, type ListenTenant, type Sleep, untilStopped } from './listen-in-process.js';

let t: TestApp;
let proxy: FlakyProxy;
let stateDirectory: string;
let harness: ListenHarness;

beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock() });
  proxy = await startFlakyProxy(t.baseUrl);
  stateDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'listen-reconnect-'));
  harness = new ListenHarness(t, proxy, stateDirectory);
});
afterEach(() => {
  proxy.fail = () => undefined;
});
afterAll(async () => {
  await proxy?.close();
  await t?.close();
  fs.rmSync(stateDirectory, { recursive: true, force: true });
});

const tenant = (): Promise<ListenTenant> => tenantWithToken(t, { webhookAccess: true });

/** The next `count` requests for a listener's stream (upgrades and checks alike) fail so. */
function failStreamRequests(count: number, failure: Failure): void {
  let left = count;
  proxy.fail = (call) => (call.path.endsWith('/stream') && left-- > 0 ? failure : undefined);
}

/** A request to open a listener (whether the proxy passed it on or failed it). */
const isOpening = (call: ProxiedCall) => call.method === 'POST' && /webhook-listeners$/.test(call.path);
const isToken = (call: ProxiedCall) => call.path.endsWith('/oauth/token');

/** Listeners svc listen opened (POSTs that reached the service) since `from` requests. */
const opened = (from = 0) => proxy.requests.slice(from).filter((call) => isOpening(call) && !call.failure);

/** Ctrl-C: svc listen exits 0, its listener closed. */
async function stopClosing(run: ListenRun): Promise<void> {
  run.stop.abort();
  expect(await run.exited).toBe(0);
  expect(run.notes.at(-1)).toBe(
    'svc listen: listener closed; the next svc listen opens a new one, with the same signing secret',
  );
}

/** The next `count` requests that open a listener fail so. */
function failOpenings(count: number, failure: Failure): void {
  let left = count;
  proxy.fail = (call) => (isOpening(call) && left-- > 0 ? failure : undefined);
}

/**
 * The client's retries ten minutes apart, on sleeps that only the test ends (it never does): a run that waited
 * for this schedule would never end, so one that ends was not held by it.
 */
function heldRetries() {
  const held = heldSleeps();
  const client = { runtime: held.runtime, retry: { baseDelayMs: 600_000, maxDelayMs: 600_000 } };
  return { ...held, client };
}

describe('svc listen keeps its listener through failures of the moment', () => {
  it.each<[string, Failure]>([
    ['the service answering 503', { status: 503 }],
    ['the rate limit (429, Retry-After: 3)', { status: 429, headers: { 'retry-after': '3' } }],
    ['connections reset', 'reset'],
  ])('a remembered listener, %s, is resumed with the same secret once the service answers', async (_, failure) => {
    const v = await tenant();
    const remembered = await harness.remember(v);
    const from = proxy.requests.length;
    // The upgrade fails, and so does the check that asks the service about the listener, twice over.
    failStreamRequests(4, failure);
    const run = harness.listen(v);

    expect(await run.ready).toBe(remembered.secret);
    expect(opened(from)).toEqual([]);
    expect(harness.state(v).read()?.id).toBe(remembered.id);
    const retries = run.notes.filter((line) => line.includes(`could not open the stream of listener ${remembered.id}`));
    expect(retries, run.notes.join('\n')).toHaveLength(2);
    for (const line of retries) {
      expect(line).toMatch(/retrying in [\d.]+ s with the same listener and signing secret/);
      // Which service it cannot reach: the address svc was given (the packet's baseUrl), as it may have moved.
      expect(line).toContain(` at ${proxy.baseUrl} (`);
    }
    expect(run.notes.join('\n')).not.toMatch(/no longer exists|NEW/);
    // Backoff, as the client's retries do it; a Retry-After is waited for.
    expect(run.waits).toHaveLength(2);
    if (typeof failure === 'object' && failure.status === 429)
      for (const ms of run.waits) expect(ms).toBeGreaterThanOrEqual(3000);

    await stopClosing(run);
  });

  it('a dropped stream that cannot reconnect at once keeps its listener and resumes it', async () => {
    const v = await tenant();
    const run = harness.listen(v);
    const secret = await run.ready;
    const listener = harness.state(v).read()!;
    const from = proxy.requests.length;
    failStreamRequests(3, 'reset');
    proxy.cutStreams();

    await run.note(/reconnected; resuming/);
    expect(opened(from)).toEqual([]);
    expect(harness.state(v).read()).toEqual(listener);
    expect(listener.secret).toBe(secret);
    expect(run.notes.filter((line) => line.includes('could not open the stream')).length).toBeGreaterThanOrEqual(1);
    run.stop.abort();
    expect(await run.exited).toBe(0);
  });
});

describe('svc listen opens a new listener only when the service says the old one is gone', () => {
  it.each<[string, (v: ListenTenant) => Promise<{ id: string; secret: string }>]>([
    [
      'closed (DELETE)',
      async (v) => {
        const listener = await harness.remember(v);
        const closed = await t.http.delete(`/api/v1/sandbox/webhook-listeners/${listener.id}`, { token: v.token });
        expect(closed.status).toBe(204);
        return listener;
      },
    ],
    ["another tenant's", async (v) => harness.remember(v, await tenant())],
  ])('a remembered listener %s (404) is replaced, and svc listen says the secret changed', async (_, remember) => {
    const v = await tenant();
    const old = await remember(v);
    const from = proxy.requests.length;
    const run = harness.listen(v);

    const secret = await run.ready;
    expect(secret).not.toBe(old.secret);
    const replaced = harness.state(v).read()!;
    expect(replaced.id).not.toBe(old.id);
    expect(replaced.secret).toBe(secret);
    expect(opened(from)).toHaveLength(1);
    const note = run.notes.find((line) => line.includes(`listener ${old.id} no longer exists`));
    expect(note, run.notes.join('\n')).toMatch(
      /\(the service answered 404 .+\)\. Opened a new listener, whl_\S+: its signing secret is NEW/,
    );
    expect(note).toContain(replaced.id);
    run.stop.abort();
    expect(await run.exited).toBe(0);
  });

  it('a held listener found gone when its stream reconnects ends svc listen (exit 1), opening none', async () => {
    const v = await tenant();
    let release: () => void = () => undefined;
    // Holds svc listen in its wait before reconnecting until the test releases it (or Ctrl-C).
    const gate: Sleep = (ms, signal) =>
      new Promise((resolve) => {
        release = () => resolve();
        void untilStopped(ms, signal).then(resolve);
      });
    const run = harness.listen(v, gate);
    await run.ready;
    const listener = harness.state(v).read()!;
    const from = proxy.requests.length;
    proxy.cutStreams();
    await run.note(/connection lost/);
    const closed = await t.http.delete(`/api/v1/sandbox/webhook-listeners/${listener.id}`, { token: v.token });
    expect(closed.status).toBe(204);
    release();

    expect(await run.exited).toBe(1);
    expect(run.notes.at(-1)).toMatch(
      /^svc listen: the listener closed \(the service answered 404 .+\); start svc listen again/,
    );
    expect(opened(from)).toEqual([]);
    expect(harness.state(v).read()).toBeUndefined();
  });
});

describe('Ctrl-C while svc listen waits to reconnect', () => {
  it('ends it at once and closes the remembered listener', async () => {
    const v = await tenant();
    const remembered = await harness.remember(v);
    failStreamRequests(Number.POSITIVE_INFINITY, { status: 503 });
    const run = harness.listen(v, untilStopped);
    await run.note(/could not open the stream/);

    await stopClosing(run);
    expect(proxy.requests.at(-1)).toMatchObject({
      method: 'DELETE',
      path: `/api/v1/sandbox/webhook-listeners/${remembered.id}`,
    });
    expect(harness.state(v).read()).toBeUndefined();
  });
});

describe('opening a listener fails for a reason of the moment', () => {
  it('a replacement whose opening is answered 503 twice is opened on the third try, and the run goes on with it', async () => {
    const v = await tenant();
    const old = await harness.remember(v);
    const closed = await t.http.delete(`/api/v1/sandbox/webhook-listeners/${old.id}`, { token: v.token });
    expect(closed.status).toBe(204);
    const from = proxy.requests.length;
    failOpenings(2, { status: 503, headers: { 'retry-after': '3' } });
    const run = harness.listen(v);

    const secret = await run.ready;
    const replaced = harness.state(v).read()!;
    expect(replaced.id).not.toBe(old.id);
    expect(replaced.secret).toBe(secret);
    expect(proxy.requests.slice(from).filter(isOpening)).toHaveLength(3);
    expect(opened(from)).toHaveLength(1);
    const retries = run.notes.filter((line) => line.startsWith('svc listen: could not open a listener'));
    expect(retries, run.notes.join('\n')).toHaveLength(2);
    for (const line of retries) expect(line).toMatch(/\(503 Proxied failure\); retrying in [\d.]+ s$/);
    // The Retry-After is waited for, as by the stream's reconnects.
    expect(run.waits).toHaveLength(2);
    for (const ms of run.waits) expect(ms).toBeGreaterThanOrEqual(3000);
    expect(run.notes.find((line) => line.includes(`listener ${old.id} no longer exists`))).toContain(replaced.id);

    await stopClosing(run);
  });

  it("waits for a Retry-After given as a date, from svc listen's own clock", async () => {
    const v = await tenant();
    failOpenings(1, { status: 503, headers: { 'retry-after': 'Fri, 27 Nov 2026 12:00:30 GMT' } });
    const run = harness.listen(v, undefined, { now: () => Date.parse('2026-11-27T12:00:00Z') });

    await run.ready;
    expect(run.waits).toEqual([30_000]);
    await stopClosing(run);
  });

  it('the first listener, its opening cut by a network failure, is opened on the next try: Ready', async () => {
    const v = await tenant();
    failOpenings(1, 'reset');
    const run = harness.listen(v);

    const secret = await run.ready;
    expect(harness.state(v).read()?.secret).toBe(secret);
    const retries = run.notes.filter((line) => line.startsWith('svc listen: could not open a listener'));
    expect(retries, run.notes.join('\n')).toHaveLength(1);
    expect(run.waits).toHaveLength(1);
    run.stop.abort();
    expect(await run.exited).toBe(0);
  });

  it('Ctrl-C while it waits to try again ends the run at once (exit 0), with nothing to close', async () => {
    const v = await tenant();
    failOpenings(Number.POSITIVE_INFINITY, { status: 503 });
    const from = proxy.requests.length;
    const run = harness.listen(v, untilStopped);
    await run.note(/could not open a listener/);

    run.stop.abort();
    expect(await run.exited).toBe(0);
    expect(run.notes.at(-1)).toBe('svc listen: stopped before a listener was opened; nothing to close');
    expect(proxy.requests.slice(from).filter((call) => call.method === 'DELETE')).toEqual([]);
    expect(harness.state(v).read()).toBeUndefined();
  });
});

describe('Ctrl-C while the service cannot be reached', () => {
  it('ends the wait for a token whose request keeps failing: the request is abandoned, the listener closed', async () => {
    const v = await tenant();
    const remembered = await harness.remember(v);
    let tokensFail = true;
    proxy.fail = (call) => (isToken(call) && tokensFail ? { status: 503 } : undefined);
    const from = proxy.requests.length;
    const { sleeps, started, client } = heldRetries();
    const run = harness.listen(v, untilStopped, { client });
    // The token request failed once and waits ten minutes for its retry.
    await started();

    tokensFail = false;
    await stopClosing(run);
    // The abandoned request was not repeated: the second token request is the close's own.
    const calls = proxy.requests.slice(from);
    expect(calls.filter(isToken).map((call) => call.failure)).toEqual([{ status: 503 }, undefined]);
    expect(calls.at(-1)).toMatchObject({
      method: 'DELETE',
      path: `/api/v1/sandbox/webhook-listeners/${remembered.id}`,
    });
    // No wait of the client's is left running on.
    expect(sleeps.map((sleep) => sleep.signal?.aborted)).toEqual([true]);
  });

  it('bounds the close that follows, and says the listener closes after its grace period', async () => {
    const v = await tenant();
    await harness.remember(v);
    proxy.fail = () => 'reset';
    const { sleeps, started, client } = heldRetries();
    const run = harness.listen(v, untilStopped, { client, closeTimeoutMs: 200 });
    await started();

    run.stop.abort();
    expect(await run.exited).toBe(0);
    expect(run.notes.at(-1)).toBe('svc listen: could not close the listener; it closes after its grace period');
    expect(harness.state(v).read()).toBeUndefined();
    // The connect's token request and the close's, each ended in its retry wait.
    expect(sleeps.map((sleep) => sleep.signal?.aborted)).toEqual([true, true]);
  });
});
