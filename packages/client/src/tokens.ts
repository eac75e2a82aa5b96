/**
 * Access tokens: fetched with the client-credentials grant, cached and reused until shortly before they
 * expire (the service asks clients to reuse a token, not fetch one per request), replaced once after a 401
 * (in the transport). Concurrent callers share one token request.
 *
 * A caller may stop waiting (its abort signal): it alone rejects, with the signal's reason, and the shared
 * request goes on for the others. Once every caller waiting for it has stopped, the request itself is
 * aborted (its attempts and retry waits end) and nothing is cached: the next caller starts a new one.
 */
import { ApiError, CredentialsError, readBody, toProblem } from './errors.js';
import type { FetchLike, TokenProvider } from './transport.js';
import { abortable, type Runtime } from './retry.js';
import type { paths } from './generated/api.js';

export type TokenResponse = paths['/api/v1/oauth/token']['post']['responses'][200]['content']['application/json'];

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes; all of the client's scopes when omitted. */
  scope?: string;
}

/** The token request that callers are waiting for. */
interface PendingToken {
  promise: Promise<string>;
  /** Aborts the request once no caller waits for it. */
  controller: AbortController;
  /** Callers still waiting (those without a signal never stop). */
  waiters: number;
}

interface CachedToken {
  value: string;
  /** When to fetch a new one (before the real expiry). */
  renewAt: number;
}

/** Renew this long before expiry: 10% of the lifetime, at most a minute. */
function renewalMargin(expiresInSeconds: number): number {
  return Math.min(60_000, expiresInSeconds * 100);
}

export class TokenSource implements TokenProvider {
  private cached: CachedToken | undefined;
  private pending: PendingToken | undefined;
  /** When the latest attempt of each token request was sent (the transport's onSend calls `sent`). */
  private readonly sentAt = new WeakMap<Request, number>();

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: ClientCredentials,
    /** The transport (token requests are retried on temporary failures, as reads are). */
    private readonly send: FetchLike,
    private readonly runtime: Runtime,
  ) {}

  /** The cached token, or the one the shared request brings; rejects with `signal`'s reason once it aborts. */
  async token(signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    if (this.cached && this.runtime.now() < this.cached.renewAt) return this.cached.value;
    this.pending ??= this.startFetch();
    const pending = this.pending;
    pending.waiters++;
    return abortable(pending.promise, signal, () => {
      if (--pending.waiters > 0) return;
      // Nobody waits any more: the request ends, and the next caller starts a new one.
      if (this.pending === pending) this.pending = undefined;
      pending.controller.abort(signal!.reason);
    });
  }

  private startFetch(): PendingToken {
    const controller = new AbortController();
    const pending: PendingToken = {
      controller,
      waiters: 0,
      promise: this.fetchToken(controller.signal).finally(() => {
        if (this.pending === pending) this.pending = undefined;
      }),
    };
    return pending;
  }

  invalidate(token: string): void {
    if (this.cached?.value === token) this.cached = undefined;
  }

  /** The transport's onSend: an attempt of a token request left at `sentAt`. */
  sent(request: Request, sentAt: number): void {
    this.sentAt.set(request, sentAt);
  }

  /** A fresh token response (also what `svc token` prints). */
  async request(): Promise<TokenResponse> {
    return (await this.exchange()).token;
  }

  /**
   * A token response and a time before it was issued: when the attempt that got it was sent, after any
   * 429 or pacing wait (a token dated from before such a wait would be renewed late, or used expired).
   * Without onSend wired, the time before sending (early: a token renewed early, never late).
   */
  private async exchange(signal?: AbortSignal): Promise<{ token: TokenResponse; issuedAfter: number }> {
    const startedAt = this.runtime.now();
    const body = {
      grant_type: 'client_credentials',
      client_id: this.credentials.clientId,
      client_secret: this.credentials.clientSecret,
      ...(this.credentials.scope ? { scope: this.credentials.scope } : {}),
    };
    const request = new Request(`${this.baseUrl}/api/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
    const response = await this.send(request);
    const json = await readBody(response);
    if (response.status === 200)
      return { token: json as TokenResponse, issuedAfter: this.sentAt.get(request) ?? startedAt };
    const problem = toProblem(response.status, json, response.statusText);
    if (response.status === 400 || response.status === 401) {
      const oauth = json as { error?: string; error_description?: string };
      throw new CredentialsError(
        `token request refused (${response.status} ${oauth.error ?? problem.title}): ${oauth.error_description ?? problem.detail}`,
        problem,
      );
    }
    throw new ApiError(problem, 'POST', '/api/v1/oauth/token', response.headers);
  }

  private async fetchToken(signal: AbortSignal): Promise<string> {
    const { token, issuedAfter } = await this.exchange(signal);
    // Every caller stopped waiting just as it arrived: abandoned, so not cached either.
    signal.throwIfAborted();
    this.cached = {
      value: token.access_token,
      renewAt: issuedAfter + token.expires_in * 1000 - renewalMargin(token.expires_in),
    };
    return token.access_token;
  }
}
