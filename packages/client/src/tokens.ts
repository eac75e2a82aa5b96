/**
 * Access tokens per SPEC Authentication: fetched with the client-credentials grant, cached and reused
 * until shortly before they expire (8), replaced once after a 401 (7, in the transport). Concurrent
 * callers share one token request.
 */
import { ApiError, CredentialsError, toProblem } from './errors.js';
import type { FetchLike, TokenProvider } from './transport.js';
import type { Runtime } from './retry.js';
import type { paths } from './generated/api.js';

export type TokenResponse = paths['/api/v1/oauth/token']['post']['responses'][200]['content']['application/json'];

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes; all of the client's scopes when omitted. */
  scope?: string;
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
  private pending: Promise<string> | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: ClientCredentials,
    /** The transport (token requests are retried on temporary failures, rule 7). */
    private readonly send: FetchLike,
    private readonly runtime: Runtime,
  ) {}

  async token(): Promise<string> {
    if (this.cached && this.runtime.now() < this.cached.renewAt) return this.cached.value;
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  invalidate(token: string): void {
    if (this.cached?.value === token) this.cached = undefined;
  }

  /** A fresh token response (also what `svc token` prints). */
  async request(): Promise<TokenResponse> {
    const body = {
      grant_type: 'client_credentials',
      client_id: this.credentials.clientId,
      client_secret: this.credentials.clientSecret,
      ...(this.credentials.scope ? { scope: this.credentials.scope } : {}),
    };
    const response = await this.send(
      new Request(`${this.baseUrl}/api/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      }),
    );
    const text = await response.text();
    const json = parse(text);
    if (response.status === 200) return json as TokenResponse;
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

  private async fetchToken(): Promise<string> {
    const requestedAt = this.runtime.now();
    const token = await this.request();
    this.cached = {
      value: token.access_token,
      renewAt: requestedAt + token.expires_in * 1000 - renewalMargin(token.expires_in),
    };
    return token.access_token;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
