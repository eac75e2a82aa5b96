/**
 * The typed client: openapi-fetch over the generated `paths`, with the transport (tokens, retry rules,
 * pacing by the rate-limit headers) as its fetch, and the resource helpers of resources.ts over it.
 *
 * ```ts
 * const client = createClient({ baseUrl, clientId, clientSecret });
 * const site = await client.sites.create({ name, siteCode, ... });
 * for await (const visit of client.siteVisits.list()) { ... }
 * ```
 */
import createFetchClient from 'openapi-fetch';
import { readBody } from './errors.js';
import type { paths } from './generated/api.js';
import { RateLimitPacer } from './pacing.js';
import {
  type CallOptions,
  Messages,
  type OpenApiClient,
  Sites,
  SiteVisits,
  unwrap,
  WebhookSubscriptions,
} from './resources.js';
import { DEFAULT_RETRY, type RetryOptions, type Runtime, systemRuntime } from './retry.js';
import { TokenSource, type TokenResponse } from './tokens.js';
import { createTransport, type FetchLike, type RetryEvent } from './transport.js';
import type { Item, Project } from './types.js';
import { checkedBaseUrl, getUrl } from './urls.js';

export interface ClientOptions {
  /** The service's base address, without /api/v1 (the sandbox packet's `baseUrl`). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes to ask for; all of the client's when omitted. */
  scope?: string;
  /** Retry bounds (attempts, backoff, the longest Retry-After waited for); defaults in DEFAULT_RETRY. */
  retry?: Partial<RetryOptions>;
  /** Time limit of one attempt (default 30 s). */
  timeoutMs?: number;
  /** Injectable for tests: fetch, clock, sleep and random. */
  fetch?: FetchLike;
  runtime?: Partial<Runtime>;
  /** Called before each wait of a retry (logging, progress displays). */
  onRetry?: (event: RetryEvent) => void;
}

export interface SiteServicesClient {
  sites: Sites;
  siteVisits: SiteVisits;
  messages: Messages;
  webhookSubscriptions: WebhookSubscriptions;
  /** The client's Active projects: one page of at most `pageSize` (default 25); reference lists have no cursor. */
  projects(pageSize?: number, options?: CallOptions): Promise<Project[]>;
  items(pageSize?: number, options?: CallOptions): Promise<Item[]>;
  /** The typed openapi-fetch client on the same transport, for anything the helpers do not cover. */
  api: OpenApiClient;
  /**
   * A GET of any path under the base address (`/api/v1/...`, appended to a base with a path prefix as the
   * typed calls' paths are), or of an absolute URL under it (a return label's or an attachment's `url`; one
   * elsewhere is a TypeError, nothing sent), with the read retry rules; JSON, text, or a file's bytes (a Uint8Array) when the
   * answer is neither (a return label, an attachment), which decoding as text would corrupt.
   */
  getRaw(path: string, options?: CallOptions): Promise<{ status: number; headers: Headers; body: unknown }>;
  /** A fresh token response (does not replace the cached token). */
  requestToken(): Promise<TokenResponse>;
  /**
   * The cached access token (fetched when missing or about to expire): for a request the client does not make
   * itself, such as a WebSocket upgrade. With `signal`, the call rejects with its reason as soon as it aborts;
   * a token request other callers also wait for goes on for them, and is abandoned once none waits.
   */
  token(options?: { signal?: AbortSignal }): Promise<string>;
}

export function createClient(options: ClientOptions): SiteServicesClient {
  const baseUrl = checkedBaseUrl(options.baseUrl);
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const settings = {
    fetch: options.fetch ?? ((request: Request) => fetch(request)),
    runtime,
    retry,
    timeoutMs: options.timeoutMs ?? 30_000,
    // One pacer for both transports: the token endpoint is counted by the same rate limit.
    pacer: new RateLimitPacer(runtime, retry.maxRetryAfterMs),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  };
  // The token transport says when each attempt is sent, so that a token is dated from its own attempt.
  const tokenTransport = createTransport({ ...settings, onSend: (request, sentAt) => tokens.sent(request, sentAt) });
  const tokens: TokenSource = new TokenSource(baseUrl, options, tokenTransport, runtime);
  const transport = createTransport({ ...settings, tokens });
  const api = createFetchClient<paths>({ baseUrl, fetch: transport });
  const reference = async <T>(
    path: '/api/v1/projects' | '/api/v1/items',
    pageSize?: number,
    options: CallOptions = {},
  ): Promise<T[]> => {
    const query = pageSize ? { 'page[size]': pageSize } : {};
    const result = await api.GET(path, { params: { query }, signal: options.signal });
    return unwrap<{ data: T[] }>(result, 'GET', path).data;
  };
  return {
    sites: new Sites(api, '/api/v1/sites'),
    siteVisits: new SiteVisits(api, '/api/v1/site-visits'),
    messages: new Messages(api, '/api/v1/messages'),
    webhookSubscriptions: new WebhookSubscriptions(api),
    projects: (pageSize, options) => reference<Project>('/api/v1/projects', pageSize, options),
    items: (pageSize, options) => reference<Item>('/api/v1/items', pageSize, options),
    api,
    async getRaw(path, options = {}) {
      const response = await transport(
        new Request(getUrl(baseUrl, path), {
          method: 'GET',
          headers: { accept: 'application/json' },
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      );
      const type = response.headers.get('content-type') ?? '';
      const textual = type === '' || /^text\/|[/+]json\b/i.test(type);
      const body = textual ? await readBody(response) : new Uint8Array(await response.arrayBuffer());
      return { status: response.status, headers: response.headers, body };
    },
    requestToken: () => tokens.request(),
    token: (tokenOptions) => tokens.token(tokenOptions?.signal),
  };
}
