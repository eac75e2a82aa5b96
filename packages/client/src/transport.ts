/**
 * The fetch every request goes through: bearer token, retries by kind of request (only what is safe to
 * repeat is repeated), and one repeat with a fresh token after a 401 (a 401 means the request did not run).
 * openapi-fetch hands it a finished Request; it answers with the final Response (success or a definite
 * error for the caller to read) or throws a typed error when the outcome is a credentials failure,
 * uncertain, or a network failure that outlasted its retries.
 */
import { randomUUID } from 'node:crypto';
import { CredentialsError, NetworkError, readBody, toProblem, UncertainResultError } from './errors.js';
import type { RateLimitPacer } from './pacing.js';
import { abortable, backoffDelay, type RetryOptions, retryAfterMs, type Runtime, sleepUnlessAborted } from './retry.js';

export type FetchLike = (request: Request) => Promise<Response>;

/**
 * - `read`: GET/HEAD, retried on 408, 429, 5xx and network failures.
 * - `create`: POST of a site, visit or message, always with an Idempotency-Key, retried like a read and on
 *   409 idempotency-pending, with the same key and the same body bytes.
 * - `token`: the token endpoint, retried like a read (a token request changes nothing), never with a bearer
 *   token.
 * - `update`: PATCH, never repeated after an uncertain outcome: it may have been applied, so the caller
 *   reads the resource before deciding.
 * - `unsafe`: uploads, webhook-subscription writes and anything else: never repeated after an uncertain
 *   outcome, as they have no Idempotency-Key (a repeat could add a second file version or subscription).
 * Every kind is repeated after 429 (the limiter refuses before anything runs) and once after a 401 with a
 * fresh token (nothing ran either). With a pacer, every attempt first waits while the rate-limit headers
 * of an earlier answer say that no request remains (pacing.ts).
 *
 * The request's own signal (the caller's `signal`) is honoured as fetch honours it, for every kind: aborted
 * before the call, nothing is sent; aborted later, the attempt under way is cancelled, and a wait (for a
 * retry, for the pacer or for the token) ends at once. The call then rejects with the signal's reason (an
 * AbortError unless the caller gave another), never wrapped and never repeated: the caller asked for the
 * end. An attempt that runs out of its own time limit is a network failure like any other.
 */
export type RequestKind = 'read' | 'create' | 'token' | 'update' | 'unsafe';

const CREATE_PATH = /\/api\/v1\/(sites|site-visits|messages)\/?$/;

export function classifyRequest(method: string, pathname: string): RequestKind {
  const verb = method.toUpperCase();
  if (verb === 'GET' || verb === 'HEAD') return 'read';
  if (verb === 'POST' && pathname.endsWith('/api/v1/oauth/token')) return 'token';
  if (verb === 'POST' && CREATE_PATH.test(pathname)) return 'create';
  if (verb === 'PATCH') return 'update';
  return 'unsafe';
}

export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface TokenProvider {
  /** The token; rejects with `signal`'s reason once it aborts (the caller stops waiting). */
  token(signal?: AbortSignal): Promise<string>;
  /** Forget `token` (it was refused); the next token() fetches a fresh one. */
  invalidate(token: string): void;
}

export interface TransportOptions {
  fetch: FetchLike;
  runtime: Runtime;
  retry: RetryOptions;
  /** Time limit of one attempt. */
  timeoutMs: number;
  tokens?: TokenProvider;
  /** Holds requests back while the service's rate-limit headers say no request remains (shared by transports). */
  pacer?: RateLimitPacer;
  onRetry?: (event: RetryEvent) => void;
  /** Told as each attempt of `request` (the caller's) is sent, after every wait: the token cache dates a token by it. */
  onSend?: (request: Request, sentAt: number) => void;
}

/**
 * Answers after which a read, a create or a token request is repeated. 408 is the service's (or a proxy's)
 * "the request did not arrive completely in time": nothing was done, and the next attempt, on a new
 * connection, may well arrive.
 */
const TEMPORARY = new Set([408, 500, 502, 503, 504]);

export function createTransport(options: TransportOptions): FetchLike {
  return async (request) => {
    const { signal } = request;
    signal.throwIfAborted();
    const url = new URL(request.url);
    const path = url.pathname;
    const kind = classifyRequest(request.method, path);
    const headers = new Headers(request.headers);
    if (kind === 'create' && !headers.has('idempotency-key')) headers.set('idempotency-key', randomUUID());
    // The body is read once, so that every attempt sends the same bytes.
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
    const authenticate = kind !== 'token' && options.tokens !== undefined && !headers.has('authorization');
    let refreshed = false;

    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted();
      // The token is taken after the pacer's last wait: one taken before a long wait may expire during it.
      // Taking it may itself wait or spend the window's last request (the token endpoint counts too): then
      // wait again and take it again.
      let token: string | undefined;
      do token = authenticate ? await options.tokens!.token(signal) : undefined;
      while (((await options.pacer?.wait(signal)) ?? 0) > 0);
      if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
      /** The wait before the next attempt, or undefined when this failure is final. */
      const delayFor = (retryAfter?: number): number | undefined => {
        if (attempt >= options.retry.maxAttempts) return undefined;
        if (retryAfter !== undefined && retryAfter > options.retry.maxRetryAfterMs) return undefined;
        return Math.max(retryAfter ?? 0, backoffDelay(attempt, options.retry, options.runtime.random));
      };
      const pause = async (delayMs: number, reason: string, response?: Response): Promise<void> => {
        // Release the answer before waiting: its body must not outlive the attempt's time limit.
        await response?.body?.cancel().catch(() => undefined);
        options.onRetry?.({ method: request.method, path, attempt, delayMs, reason });
        await sleepUnlessAborted(options.runtime, delayMs, signal);
      };

      options.onSend?.(request, options.runtime.now());
      let response: Response;
      try {
        // The caller's abort ends the attempt too (also an injected fetch that ignores its signal); only the
        // time limit's is a failure to retry.
        response = await abortable(
          options.fetch(
            new Request(url, {
              method: request.method,
              headers,
              body: body ?? null,
              signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]),
            }),
          ),
          signal,
        );
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (kind === 'update' || kind === 'unsafe')
          throw new UncertainResultError(request.method, path, 'no response', undefined, { cause: error });
        const delayMs = delayFor();
        if (delayMs !== undefined) {
          await pause(delayMs, `network: ${error instanceof Error ? error.message : String(error)}`);
          continue;
        }
        const failure = new NetworkError(request.method, path, { cause: error, url: `${url.origin}${path}` });
        // Perhaps created: the key (also one made up here) is what a safe repeat needs.
        if (kind === 'create') failure.idempotencyKey = headers.get('idempotency-key') ?? undefined;
        throw failure;
      }

      const status = response.status;
      const retryAfter = retryAfterMs(response.headers.get('retry-after'), options.runtime.now());
      options.pacer?.observe(status, response.headers, retryAfter);
      if (status === 401 && token !== undefined) {
        if (!refreshed) {
          refreshed = true;
          await response.body?.cancel().catch(() => undefined);
          options.tokens!.invalidate(token);
          continue;
        }
        throw new CredentialsError(
          `${request.method} ${path}: refused with 401 again after a fresh token: the credentials are wrong or revoked`,
          toProblem(status, await readBody(response)),
        );
      }
      if (status === 429) {
        const delayMs = delayFor(retryAfter);
        if (delayMs === undefined) return response;
        await pause(delayMs, '429 rate limited', response);
        continue;
      }
      if (status >= 500 && (kind === 'update' || kind === 'unsafe')) {
        throw new UncertainResultError(
          request.method,
          path,
          `status ${status}`,
          toProblem(status, await readBody(response)),
          { headers: response.headers },
        );
      }
      const pending = kind === 'create' && status === 409 && (await isIdempotencyPending(response));
      // An update's or an unsafe write's 5xx threw above; its 408 (nothing was done) goes back to the caller as
      // an ApiError: such a write is repeated only by the caller, who knows whether a repeat is wanted.
      const repeatable = kind === 'read' || kind === 'create' || kind === 'token';
      if ((repeatable && TEMPORARY.has(status)) || pending) {
        const delayMs = delayFor(retryAfter);
        if (delayMs !== undefined) {
          await pause(delayMs, pending ? '409 idempotency-pending' : `status ${status}`, response);
          continue;
        }
      }
      return response;
    }
  };
}

async function isIdempotencyPending(response: Response): Promise<boolean> {
  const problem = (await readBody(response.clone())) as { type?: unknown };
  return typeof problem?.type === 'string' && problem.type.endsWith('idempotency-pending');
}
