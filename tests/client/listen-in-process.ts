/**
 * `svc listen` (its runListen) in this process against a test app, through a flaky proxy (helpers/flaky-proxy.ts)
 * that can make the service look unreachable or restarting; its waits between reconnects are the test's
 * (`sleep`), so nothing waits for real. For the tests of what svc listen does when a stream fails.
 */
import type { ClientOptions, FetchLike } from '@site-services/client';
import type { TestApp } from '../helpers/app.js';
import { clientFor } from '../helpers/client.js';
import { type FlakyProxy, PROXY_FAILURE_HEADER } from '../helpers/flaky-proxy.js';
import { runListen } from '../../packages/client/src/cli/listen/listen.js';
import { ListenerState, type RememberedListener } from '../../packages/client/src/cli/listen/state.js';
import { createListener } from '../helpers/listener-stream.js';
import type { TestTenant } from '../helpers/tenants.js';

export const FORWARD_TO = 'http://127.0.0.1:9/webhooks';

export type ListenTenant = TestTenant & { token: string };

export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** No wait at all (the proxy's failures are counted, not timed). */
export const noWait: Sleep = async () => undefined;

/** A wait that only Ctrl-C (the stop signal) ends: what a long backoff is to a developer who presses it. */
export const untilStopped: Sleep = (_ms, signal) =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

export interface ListenRun {
  stop: AbortController;
  notes: string[];
  /** Each wait svc listen asked for, in ms. */
  waits: number[];
  /** The secret of the Ready line; rejects if svc listen exits first. */
  ready: Promise<string>;
  exited: Promise<number>;
  /** Resolves with the first note (already printed or to come) that matches. */
  note(pattern: RegExp): Promise<string>;
}

/**
 * fetch, with the failures the proxy makes up passed on as answers of the test's own (no `url`): the contract
 * check, which is of the service's answers, leaves them alone.
 */
const proxiedFetch: FetchLike = async (request) => {
  const response = await fetch(request);
  if (!response.headers.has(PROXY_FAILURE_HEADER)) return response;
  return new Response(response.body, response);
};

export class ListenHarness {
  constructor(
    private readonly t: TestApp,
    private readonly proxy: FlakyProxy,
    private readonly stateDirectory: string,
  ) {}

  /** Where svc listen (through the proxy, forwarding to FORWARD_TO) remembers the tenant's listener. */
  state(tenant: ListenTenant): ListenerState {
    return new ListenerState([this.proxy.baseUrl, tenant.clientId, FORWARD_TO, []], this.stateDirectory);
  }

  /** A listener of `owner`'s, remembered for `tenant` as a killed svc listen leaves its own. */
  async remember(tenant: ListenTenant, owner: ListenTenant = tenant): Promise<RememberedListener> {
    const { id, secret, streamPath } = await createListener(this.t.http, owner.token);
    const listener = { id, secret, streamPath, graceSeconds: 60 };
    this.state(tenant).save(listener);
    return listener;
  }

  /**
   * Starts svc listen for the tenant through the proxy; `options.client` adds to its client's options (retries,
   * runtime), `options.closeTimeoutMs` bounds its close after Ctrl-C, `options.now` is its clock (epoch ms).
   */
  listen(
    tenant: ListenTenant,
    sleep: Sleep = noWait,
    options: { client?: Partial<ClientOptions>; closeTimeoutMs?: number; now?: () => number } = {},
  ): ListenRun {
    const stop = new AbortController();
    const notes: string[] = [];
    const waits: number[] = [];
    const watchers: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
    let readySecret: (secret: string) => void = () => undefined;
    const secret = new Promise<string>((resolve) => {
      readySecret = resolve;
    });
    const baseUrl = this.proxy.baseUrl;
    const exited = runListen(
      { forwardTo: FORWARD_TO },
      {
        client: clientFor(this.t, tenant, { fetch: proxiedFetch, ...options.client, baseUrl }),
        baseUrl,
        clientId: tenant.clientId,
        out: (line) => {
          const ready = /^Ready\. .* Signing secret: (\S+)$/.exec(line);
          if (ready) readySecret(ready[1]!);
        },
        note: (line) => {
          notes.push(line);
          for (const watcher of watchers.filter(({ pattern }) => pattern.test(line))) {
            watchers.splice(watchers.indexOf(watcher), 1);
            watcher.resolve(line);
          }
        },
        stateDirectory: this.stateDirectory,
        ...(options.closeTimeoutMs !== undefined ? { closeTimeoutMs: options.closeTimeoutMs } : {}),
        ...(options.now ? { now: options.now } : {}),
        sleep: (ms, signal) => {
          waits.push(ms);
          return sleep(ms, signal);
        },
      },
      stop.signal,
    );
    const exitedFirst = exited.then((code) => {
      throw new Error(`svc listen exited ${code} first:\n${notes.join('\n')}`);
    });
    // A run stopped on purpose exits first too: only a test still waiting for its Ready line is told.
    const ready = Promise.race([secret, exitedFirst]);
    ready.catch(() => undefined);
    return {
      stop,
      notes,
      waits,
      ready,
      exited,
      note: (pattern) => {
        const printed = notes.find((line) => pattern.test(line));
        if (printed !== undefined) return Promise.resolve(printed);
        return Promise.race([new Promise<string>((resolve) => watchers.push({ pattern, resolve })), exitedFirst]);
      },
    };
  }
}
