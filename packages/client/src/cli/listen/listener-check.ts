/**
 * What `svc listen` makes of a stream it could not open: is the listener gone (only then is a new one, with a
 * new secret, opened), or was this a failure of the moment (then the same listener is tried again)?
 *
 * Node's WebSocket does not say what a refused upgrade was answered, so the service is asked with a plain GET
 * of the stream's path (no `Upgrade`): it runs the same authentication and listener checks as the upgrade
 * (src/modules/webhook-listeners/routes.ts) and answers 426 `upgrade-required` when the listener is there and
 * this client's tenant's, 404 when it is not (never existed, another tenant's, closed, or past its grace).
 * One attempt, which `stop` cancels: the caller's backoff does the retrying, so Ctrl-C ends a wait at once.
 */
import type { SiteServicesClient } from '../../client.js';
import { ApiError, describeCause, NetworkError, readBody, toProblem, UncertainResultError } from '../../errors.js';
import { retryAfterMs } from '../../retry.js';
import { urlUnder } from '../../urls.js';

export type ListenerVerdict =
  /** The listener is there: the stream failed for another reason (a proxy, a restart in between). */
  | { kind: 'exists' }
  /** The service says the listener no longer exists or is not ours: only this opens a new one. */
  | { kind: 'gone'; detail: string }
  /** No definite answer (network, timeout, 408, 429, 5xx): keep the listener and try again. */
  | { kind: 'unsure'; reason: string; retryAfterMs?: number };

/** A probe the service does not answer within this is a failure of the moment. */
const CHECK_TIMEOUT_MS = 10_000;

/** The service's answers for a listener that no longer exists or is not this tenant's (410 for a proxy's say). */
const GONE = new Set([404, 410]);
/** Answers that say nothing about the listener: the service (or what is in front of it) is busy or restarting. */
const TEMPORARY = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * Whether an error of the token fetch, the probe or the opening of a listener is a failure of the moment (else
 * it ends svc listen). Opening one is a write the client does not repeat after a network failure or a 5xx
 * (UncertainResultError): svc listen does, as a listener the lost attempt may have opened is never connected
 * to and closes after its grace.
 */
export function isTemporary(error: unknown): boolean {
  if (error instanceof NetworkError || error instanceof UncertainResultError) return true;
  return error instanceof ApiError && TEMPORARY(error.status);
}

export async function checkListener(
  client: SiteServicesClient,
  baseUrl: string,
  streamPath: string,
  stop: AbortSignal,
  /** Milliseconds since the epoch, for a Retry-After given as a date. */
  now: () => number = Date.now,
): Promise<ListenerVerdict> {
  let status: number;
  let headers: Headers;
  let body: unknown;
  try {
    const response = await fetch(urlUnder(baseUrl, streamPath), {
      headers: { authorization: `Bearer ${await client.token({ signal: stop })}`, accept: 'application/problem+json' },
      redirect: 'manual',
      signal: AbortSignal.any([stop, AbortSignal.timeout(CHECK_TIMEOUT_MS)]),
    });
    ({ status, headers } = response);
    body = await readBody(response);
    // The token was refused: the client's transport renews it once (or throws CredentialsError, which ends
    // svc listen), as for any request; the WebSocket and this probe would go on sending the refused one.
    if (status === 401) ({ status, headers, body } = await client.getRaw(streamPath));
  } catch (error) {
    if (error instanceof Error && !isTemporary(error) && !isFetchFailure(error)) throw error;
    return { kind: 'unsure', reason: describeCause(error) };
  }
  const problem = toProblem(status, body);
  if (status === 426) return { kind: 'exists' };
  if (GONE.has(status)) return { kind: 'gone', detail: `the service answered ${status} ${problem.title}` };
  if (TEMPORARY(status) || status < 400) {
    const wait = retryAfterMs(headers.get('retry-after'), now());
    return {
      kind: 'unsure',
      reason: `${status} ${problem.title}`,
      ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    };
  }
  // 403 (the tenant lost webhook access, or the token webhooks:write) and the like: a new listener would be
  // refused too, and the remembered one may yet be resumed once that is fixed.
  throw new ApiError(problem, 'GET', streamPath, headers);
}

/** fetch's own failures: no connection (TypeError), cancelled or timed out (AbortError, TimeoutError). */
function isFetchFailure(error: Error): boolean {
  return error instanceof TypeError || error.name === 'AbortError' || error.name === 'TimeoutError';
}
