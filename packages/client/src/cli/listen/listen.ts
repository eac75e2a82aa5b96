/**
 * `svc listen --forward-to <url> [--events type,type]`: opens a sandbox webhook listener, holds its
 * stream (stream.ts) and forwards every attempt to the developer's address, then
 * reports the answer back, so the service records it like any delivery (a non-2xx is retried on the
 * schedule). Prints `Ready. Forwarding events to <url>. Signing secret: <secret>` once connected, then
 * one line per attempt. A dropped stream is reconnected until the listener's grace period runs out;
 * stopping (Ctrl-C) closes the listener. A command that was killed and started again with the same
 * credentials and options within the grace period resumes the same listener (same secret): the listener
 * is remembered in a state file of the user's own (state.ts) until it is closed.
 */
import { ApiError, toProblem } from '../../errors.js';
import type { SiteServicesClient } from '../../client.js';
import { UsageError } from '../credentials.js';
import type { ForwardFetch } from './forward.js';
import { ListenerState, type RememberedListener } from './state.js';
import { holdStream, type StreamEnd } from './stream.js';

export interface ListenOptions {
  forwardTo: string;
  eventTypes?: string[];
}

export interface ListenDeps {
  client: SiteServicesClient;
  baseUrl: string;
  clientId: string;
  /** A line on stdout (the Ready line and one per attempt). */
  out: (line: string) => void;
  /** A line on stderr (connection notes). */
  note: (line: string) => void;
  fetch?: ForwardFetch;
  /** Where the listener is remembered (state.ts's `stateDirectory` unless given). */
  stateDirectory?: string;
}

/** The close codes the service ends a stream with (see its reference). */
const CLOSED = 4410;
const REPLACED = 4409;
const UNAUTHORIZED = 4401;
const MAX_BACKOFF_MS = 5_000;
const PATH = '/api/v1/sandbox/webhook-listeners';

type Listener = RememberedListener;

export function parseForwardTo(value: string | undefined): string {
  if (!value)
    throw new UsageError('svc listen needs --forward-to <url>, e.g. --forward-to http://localhost:8080/webhooks');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--forward-to is not an absolute URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--forward-to must be an http:// or https:// URL, got ${value}`);
  return value;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

async function openListener(client: SiteServicesClient, eventTypes: string[] | undefined): Promise<Listener> {
  const result = await client.api.POST(PATH, { body: eventTypes ? { eventTypes: eventTypes as never } : {} });
  if (!result.response.ok) {
    const problem = toProblem(result.response.status, result.error, result.response.statusText);
    if (result.response.status === 404)
      throw new UsageError('this service has no webhook listeners: svc listen works against a sandbox only');
    throw new ApiError(problem, 'POST', PATH, result.response.headers);
  }
  return result.data!.data;
}

/** Runs until `stop` aborts (then closes the listener: exit 0) or the listener is lost (exit 1). */
export async function runListen(options: ListenOptions, deps: ListenDeps, stop: AbortSignal): Promise<number> {
  const { client, note } = deps;
  const state = new ListenerState(
    [deps.baseUrl, deps.clientId, options.forwardTo, options.eventTypes ?? []],
    deps.stateDirectory,
  );
  let listener: Listener | undefined = state.read();
  const forget = () => state.forget();
  const open = async () => {
    listener = await openListener(client, options.eventTypes);
    state.save(listener);
    return listener;
  };
  let resuming = listener !== undefined;
  if (!listener) await open();
  else note(`svc listen: resuming listener ${listener.id}`);
  let graceMs = listener!.graceSeconds * 1000;
  let ready = false;
  const onReady = () => {
    if (!ready) deps.out(`Ready. Forwarding events to ${options.forwardTo}. Signing secret: ${listener!.secret}`);
    else note('svc listen: reconnected; resuming');
    ready = true;
  };

  const session = async (): Promise<StreamEnd> => {
    const token = await client.token();
    // Stopped while the token was on its way: the abort has fired already and would never close a socket
    // opened now, which would hold the command until the server ends the stream.
    if (stop.aborted) return { opened: false, ready: false, code: 0, reason: '' };
    const { baseUrl, out, fetch } = deps;
    const { streamPath } = listener!;
    return holdStream({ baseUrl, streamPath, token, forwardTo: options.forwardTo, fetch, out, onReady }, stop);
  };

  let deadline = Date.now() + graceMs;
  let backoffMs = 250;
  while (!stop.aborted) {
    const end = await session().catch((error: unknown) => {
      note(`svc listen: ${error instanceof Error ? error.message : String(error)}`);
      return { opened: false, ready: false, code: 0, reason: '' };
    });
    if (stop.aborted) break;
    if (resuming && !end.opened) {
      // The remembered listener is gone (closed, or its grace ran out): a new one, with a new secret.
      resuming = false;
      forget();
      await open();
      graceMs = listener!.graceSeconds * 1000;
      deadline = Date.now() + graceMs;
      continue;
    }
    resuming = false;
    if (end.code === CLOSED || end.code === REPLACED || end.code === UNAUTHORIZED) {
      forget();
      note(
        end.code === CLOSED
          ? 'svc listen: the listener closed; start svc listen again for a new one'
          : end.code === REPLACED
            ? 'svc listen: another svc listen took this listener over'
            : 'svc listen: the credentials were revoked or lost webhooks:write; the stream ended',
      );
      return 1;
    }
    if (end.opened) {
      deadline = Date.now() + graceMs;
      backoffMs = 250;
      note(`svc listen: connection lost (${end.code}${end.reason ? ` ${end.reason}` : ''}); reconnecting`);
    } else if (Date.now() > deadline) {
      note('svc listen: could not reconnect within the grace period; the listener has closed');
      forget();
      return 1;
    }
    await sleep(backoffMs, stop);
    backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
  }
  // Stopped: close the listener, so that nothing more is queued to it.
  const closed = await client.api
    .DELETE(`${PATH}/{id}`, { params: { path: { id: listener!.id } } })
    .catch(() => undefined);
  forget();
  note(
    closed?.response.ok
      ? 'svc listen: listener closed'
      : 'svc listen: could not close the listener; it closes after its grace period',
  );
  return 0;
}
