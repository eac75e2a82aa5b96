/**
 * `svc listen --forward-to <url> [--events type,type] [--new-secret]`: opens a sandbox webhook listener, holds its
 * stream (stream.ts) and forwards every attempt to the developer's address, then reports the answer back,
 * so the service records it like any delivery (a non-2xx is retried on the schedule). Prints
 * `Ready. Forwarding events to <url>. Signing secret: <secret>` once connected, then one line per attempt.
 * Stopping (Ctrl-C) closes the listener.
 *
 * Every new listener is given the signing secret kept for the client id, at whatever address (state.ts's
 * SigningSecret, made on first use), so the Ready line shows the same secret run after run, Ctrl-C or not;
 * --new-secret makes and keeps a new one (a remembered listener, which has the old one, is closed, not resumed).
 *
 * The listener is remembered in a state file of the user's own (state.ts) until it is closed, so that the
 * same command killed and started again resumes it, with the same secret: the developer's receiver keeps
 * verifying. A stream that drops or cannot be opened is tried again, with backoff, on the same listener for
 * as long as the service cannot say otherwise (network failures, timeouts, 429, 5xx, a restart), at the address the
 * credential packet names when each try starts (`rebase`: a sandbox restarted on another port rewrites it). Only the
 * service's word that the listener is gone (listener-check.ts: 404 or 410, or the stream closed with 4410)
 * ends it: a remembered listener is then replaced by a new one (with the kept secret; a note on stderr
 * says whether that differs from the old listener's); one this run has held ends the command (exit 1), as a listener closed while connected does.
 * Opening a listener (the first, when none is remembered, or a replacement) is tried again with the same
 * backoff after a failure of the moment (isTemporary: network failures, 408, 429, 5xx; a note on stderr for each
 * wait); a refusal (another 4xx, or a service without listeners) ends the command.
 *
 * Ctrl-C is never held up: it ends any wait at once, the token fetch included (with nothing listening, that
 * request is abandoned, its retries too), and the close that follows is bounded (CLOSE_TIMEOUT_MS). Stopped
 * before any listener was opened, there is nothing to close (one a cancelled POST may have opened is never
 * connected to, and closes after its grace).
 */
import type { SiteServicesClient } from '../../client.js';
import { ApiError, describeCause, toProblem } from '../../errors.js';
import { backoffDelay } from '../../retry.js';
import { UsageError } from '../credentials.js';
import type { ForwardFetch } from './forward.js';
import { checkListener, isTemporary, type ListenerVerdict } from './listener-check.js';
import { describeOpenFailure, RECONNECT_BACKOFF, reconnectDelay, retryAfterOf, seconds, sleep } from './reconnect.js';
import { ListenerState, type RememberedListener, SigningSecret } from './state.js';
import { holdStream, type StreamEnd } from './stream.js';

export interface ListenOptions {
  forwardTo: string;
  eventTypes?: string[];
  /** Make and keep a new signing secret before opening a listener. */
  newSecret?: boolean;
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
  /**
   * The wait between attempts to open a stream (default a timer). It must end as soon as `signal` aborts, so
   * that Ctrl-C is never held up by a backoff; tests inject one that does not wait.
   */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The backoff's jitter: a number in [0, 1) (default Math.random). */
  random?: () => number;
  /** Milliseconds since the epoch, for a Retry-After given as a date (default Date.now). */
  now?: () => number;
  /** How long the close after Ctrl-C may take (default CLOSE_TIMEOUT_MS); tests shorten it. */
  closeTimeoutMs?: number;
  /**
   * The service's new address and a client for it when the credential packet has moved on from `baseUrl` (a sandbox
   * restarted on another port rewrites its baseUrl); asked before each attempt to open a listener or its stream.
   */
  rebase?: (baseUrl: string) => { baseUrl: string; client: SiteServicesClient } | undefined;
}

/** The close codes the service ends a stream with (see its reference). */
const CLOSED = 4410;
const REPLACED = 4409;
const UNAUTHORIZED = 4401;
/**
 * The close (DELETE) after Ctrl-C gives up after this, its retries included: against a service that cannot be
 * reached they would hold the developer's Ctrl-C for as long as the client's retries last, and a listener left
 * open closes by itself after its grace period anyway.
 */
const CLOSE_TIMEOUT_MS = 5_000;
const PATH = '/api/v1/sandbox/webhook-listeners';

type Listener = RememberedListener;

/** A stream that was not even tried: its token could not be fetched, for a reason of the moment. */
type NoStream = { failed: string };

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

async function openListener(
  client: SiteServicesClient,
  eventTypes: string[] | undefined,
  secret: string,
  stop: AbortSignal,
): Promise<Listener> {
  const body = { ...(eventTypes ? { eventTypes: eventTypes as never } : {}), secret };
  const result = await client.api.POST(PATH, { body, signal: stop });
  if (!result.response.ok) {
    const problem = toProblem(result.response.status, result.error, result.response.statusText);
    if (result.response.status === 404)
      throw new UsageError('this service has no webhook listeners: svc listen works against a sandbox only');
    throw new ApiError(problem, 'POST', PATH, result.response.headers);
  }
  return result.data!.data;
}

/** Closes a listener (DELETE) within `timeoutMs`; whether the service said it did. */
async function closeListener(client: SiteServicesClient, id: string, timeoutMs: number): Promise<boolean> {
  const closed = await client.api
    .DELETE(`${PATH}/{id}`, { params: { path: { id } }, signal: AbortSignal.timeout(timeoutMs) })
    .catch(() => undefined);
  return closed?.response.ok === true;
}

/** The note for a held stream the service ended for good, or undefined for one to reconnect. */
function endedForGood(code: number): string | undefined {
  if (code === CLOSED) return 'svc listen: the listener closed; start svc listen again for a new one';
  if (code === REPLACED) return 'svc listen: another svc listen took this listener over';
  if (code === UNAUTHORIZED) return 'svc listen: the credentials were revoked or lost webhooks:write; the stream ended';
  return undefined;
}

/** Runs until `stop` aborts (then closes the listener: exit 0) or the listener is lost (exit 1). */
export async function runListen(options: ListenOptions, deps: ListenDeps, stop: AbortSignal): Promise<number> {
  let { client, baseUrl } = deps;
  const { note } = deps;
  const wait = deps.sleep ?? sleep;
  const random = deps.random ?? Math.random;
  const now = deps.now ?? Date.now;
  const stateAt = (at: string) =>
    new ListenerState([at, deps.clientId, options.forwardTo, options.eventTypes ?? []], deps.stateDirectory);
  let state = stateAt(baseUrl);
  const signingSecret = new SigningSecret({ clientId: deps.clientId, baseUrl: deps.baseUrl }, deps.stateDirectory);
  const secret = options.newSecret ? signingSecret.renew() : signingSecret.get();
  const closeTimeoutMs = deps.closeTimeoutMs ?? CLOSE_TIMEOUT_MS;
  /**
   * Follows the credential packet to the service's new address, saying so, the listener remembered there: a running
   * command kept trying the address it started with, and only its notes told the developer why nothing came back.
   */
  const follow = () => {
    const moved = deps.rebase?.(baseUrl);
    if (!moved) return;
    note(`svc listen: the credential packet's baseUrl is now ${moved.baseUrl} (was ${baseUrl}); connecting there`);
    const remembered = state.read();
    state.forget();
    ({ baseUrl, client } = moved);
    state = stateAt(baseUrl);
    if (remembered) state.save(remembered);
  };
  /** A new listener, once the service opens one; undefined when stopped first. */
  const open = async (): Promise<Listener | undefined> => {
    for (let failures = 1; !stop.aborted; failures++) {
      follow();
      try {
        const opened = await openListener(client, options.eventTypes, secret, stop);
        state.save(opened);
        return opened;
      } catch (error) {
        if (stop.aborted) break;
        if (!isTemporary(error)) throw error;
        const delayMs = reconnectDelay(failures, retryAfterOf(error, now()), random);
        note(`svc listen: could not open a listener (${describeOpenFailure(error)}); retrying in ${seconds(delayMs)}`);
        await wait(delayMs, stop);
      }
    }
    note('svc listen: stopped before a listener was opened; nothing to close');
    return undefined;
  };
  let remembered = state.read();
  if (remembered && options.newSecret) {
    // Its secret is the old one: closed and replaced rather than resumed.
    await closeListener(client, remembered.id, closeTimeoutMs);
    state.forget();
    remembered = undefined;
  }
  if (options.newSecret) note('svc listen: made a new signing secret; every svc listen uses it from now on');
  /** A remembered listener that this run has not held yet: the one a "gone" replaces with a new listener. */
  let resuming = remembered !== undefined;
  const first = remembered ?? (await open());
  if (!first) return 0;
  let listener: Listener = first;
  if (resuming) note(`svc listen: resuming listener ${listener.id} (the same signing secret as before)`);
  let announced = false;
  const onReady = () => {
    if (!announced) deps.out(`Ready. Forwarding events to ${options.forwardTo}. Signing secret: ${listener.secret}`);
    else note('svc listen: reconnected; resuming');
    announced = true;
  };

  const connect = async (): Promise<StreamEnd | NoStream> => {
    const stopped: StreamEnd = { opened: false, ready: false, code: 0, reason: '' };
    let token: string;
    try {
      // Ctrl-C ends the wait for the token (and, with nothing else waiting for it, its request and retries).
      token = await client.token({ signal: stop });
    } catch (error) {
      if (stop.aborted) return stopped;
      if (!isTemporary(error)) throw error;
      return { failed: describeCause(error) };
    }
    // Stopped while the token was on its way: the abort has fired already and would never close a socket
    // opened now, which would hold the command until the server ends the stream.
    if (stop.aborted) return stopped;
    const { out, fetch } = deps;
    const { streamPath } = listener;
    return holdStream({ baseUrl, streamPath, token, forwardTo: options.forwardTo, fetch, out, onReady }, stop);
  };

  /** What a stream that never became ready says about the listener. */
  const verdictOn = async (end: StreamEnd | NoStream): Promise<ListenerVerdict> => {
    if ('failed' in end) return { kind: 'unsure', reason: end.failed };
    // Upgraded, so the service had found the listener; a 4410 before `ready` means it closed just then.
    if (end.opened && end.code === CLOSED) return { kind: 'gone', detail: 'the service closed its stream with 4410' };
    if (end.opened) return { kind: 'unsure', reason: `the stream closed before it was ready (${end.code})` };
    return checkListener(client, baseUrl, listener.streamPath, stop, now);
  };

  let failures = 0;
  while (!stop.aborted) {
    follow();
    const end = await connect();
    if (stop.aborted) break;
    if ('ready' in end && end.ready) {
      resuming = false;
      failures = 0;
      const lost = endedForGood(end.code);
      if (lost) {
        state.forget();
        note(lost);
        return 1;
      }
      note(`svc listen: connection lost (${end.code}${end.reason ? ` ${end.reason}` : ''}); reconnecting`);
      await wait(backoffDelay(1, RECONNECT_BACKOFF, random), stop);
      continue;
    }
    const verdict = await verdictOn(end);
    if (stop.aborted) break;
    if (verdict.kind === 'gone') {
      state.forget();
      if (!resuming) {
        note(`svc listen: the listener closed (${verdict.detail}); start svc listen again for a new one`);
        return 1;
      }
      const gone = listener;
      const replacement = await open();
      if (!replacement) return 0;
      listener = replacement;
      resuming = false;
      failures = 0;
      note(
        `svc listen: listener ${gone.id} no longer exists (${verdict.detail}). Opened a new listener, ${listener.id}: ` +
          (listener.secret === gone.secret
            ? 'with the same signing secret'
            : 'its signing secret is NEW, not the one your receiver has (the Ready line shows it)'),
      );
      continue;
    }
    failures++;
    const delayMs = reconnectDelay(failures, verdict.kind === 'unsure' ? verdict.retryAfterMs : undefined, random);
    const reason = verdict.kind === 'unsure' ? verdict.reason : 'the service has the listener; the stream did not open';
    note(
      // The address too: one the credential packet does not name (SVC_BASE_URL) is not followed (rebase).
      `svc listen: could not open the stream of listener ${listener.id} at ${baseUrl} (${reason}); ` +
        `retrying in ${seconds(delayMs)} with the same listener and signing secret`,
    );
    await wait(delayMs, stop);
  }
  // Stopped: close the listener, so that nothing more is queued to it.
  const closed = await closeListener(client, listener.id, closeTimeoutMs);
  state.forget();
  note(
    closed
      ? 'svc listen: listener closed; the next svc listen opens a new one, with the same signing secret'
      : 'svc listen: could not close the listener; it closes after its grace period',
  );
  return 0;
}
