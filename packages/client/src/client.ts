/**
 * The typed client: openapi-fetch over the generated `paths`, with the transport (tokens, retry rules,
 * pacing by the rate-limit headers) as its fetch. Resource helpers unwrap `{data}` and throw `ApiError`
 * on a problem answer.
 *
 * ```ts
 * const client = createClient({ baseUrl, clientId, clientSecret });
 * const site = await client.sites.create({ name, siteCode, ... });
 * for await (const visit of client.siteVisits.list()) { ... }
 * ```
 */
import { randomUUID } from 'node:crypto';
import createFetchClient, { type Client } from 'openapi-fetch';
import { ApiError, NetworkError, readBody, toProblem } from './errors.js';
import type { paths } from './generated/api.js';
import { RateLimitPacer } from './pacing.js';
import { DEFAULT_RETRY, type RetryOptions, type Runtime, systemRuntime } from './retry.js';
import { TokenSource, type TokenResponse } from './tokens.js';
import { createTransport, type FetchLike, type RetryEvent } from './transport.js';
import type {
  CollectionPath,
  CreateBody,
  FileAttachmentUpload,
  Item,
  ListQuery,
  Page,
  PatchBody,
  Project,
  ResourceOf,
  ReturnLabelUpload,
  WebhookSubscription,
  WebhookSubscriptionCreate,
  WebhookSubscriptionPatch,
} from './types.js';
import { type FileSource, uploadForm, type UploadOptions } from './uploads.js';
import { checkedBaseUrl, urlUnder } from './urls.js';

/** openapi-fetch's methods, called with a path chosen at run time (the generic resource client). */
type UntypedCall = (path: string, init: unknown) => Promise<unknown>;
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

/** Options every call takes. */
export interface CallOptions {
  /**
   * Ends the call as fetch's signal does: nothing more is sent, a wait before a retry ends, and the call
   * rejects with the signal's reason (an AbortError by default). A write aborted after it was sent may still
   * have been done (for a create, repeat it with the same idempotencyKey to find out).
   */
  signal?: AbortSignal;
}

export interface CreateOptions extends CallOptions {
  /**
   * Sent as Idempotency-Key; a random one when omitted. Repeat it to make a repeated create safe: after a
   * failure, the thrown ApiError or NetworkError carries the key sent as `idempotencyKey`.
   */
  idempotencyKey?: string;
}

export interface CreateResult<T> {
  resource: T;
  /** The service answered with the saved response of an earlier request with the same key. */
  replayed: boolean;
  idempotencyKey: string;
}

export interface UpdateOptions extends CallOptions {
  /** The ETag of the version the change is based on (409 version-conflict when it moved on). */
  ifMatch?: string;
}

type OpenApiClient = Client<paths>;
interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

function unwrap<T>(result: FetchResult, method: string, path: string): T {
  if (result.response.ok) return result.data as T;
  throw new ApiError(
    toProblem(result.response.status, result.error, result.response.statusText),
    method,
    path,
    result.response.headers,
  );
}

/** Sites, site visits and messages share create, get, update and cursor listing. */
export class Collection<P extends CollectionPath> {
  constructor(
    protected readonly api: OpenApiClient,
    readonly path: P,
  ) {}

  async create(body: CreateBody<P>, options: CreateOptions = {}): Promise<ResourceOf<P>> {
    return (await this.createWithDetails(body, options)).resource;
  }

  async createWithDetails(body: CreateBody<P>, options: CreateOptions = {}): Promise<CreateResult<ResourceOf<P>>> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    try {
      const result = (await (this.api.POST as UntypedCall)(this.path, {
        body,
        params: { header: { 'Idempotency-Key': idempotencyKey } },
        signal: options.signal,
      })) as FetchResult;
      const { data } = unwrap<{ data: ResourceOf<P> }>(result, 'POST', this.path);
      return {
        resource: data,
        replayed: result.response.headers.get('idempotent-replayed') === 'true',
        idempotencyKey,
      };
    } catch (error) {
      // A key made up here is known to the caller only through the error: needed to repeat the create safely.
      if (error instanceof ApiError || error instanceof NetworkError) error.idempotencyKey = idempotencyKey;
      throw error;
    }
  }

  async get(id: string, options: CallOptions = {}): Promise<ResourceOf<P>> {
    const result = (await (this.api.GET as UntypedCall)(`${this.path}/{id}`, {
      params: { path: { id } },
      signal: options.signal,
    })) as FetchResult;
    return unwrap<{ data: ResourceOf<P> }>(result, 'GET', `${this.path}/${id}`).data;
  }

  /** PATCH is never repeated blindly: an uncertain outcome throws UncertainResultError (read, then decide). */
  async update(id: string, body: PatchBody<P>, options: UpdateOptions = {}): Promise<ResourceOf<P>> {
    const header = options.ifMatch ? { 'If-Match': options.ifMatch } : {};
    const result = (await (this.api.PATCH as UntypedCall)(`${this.path}/{id}`, {
      body,
      params: { path: { id }, header },
      signal: options.signal,
    })) as FetchResult;
    return unwrap<{ data: ResourceOf<P> }>(result, 'PATCH', `${this.path}/${id}`).data;
  }

  /** Every page, following meta.nextCursor. `page[after]` in the query starts after that cursor. */
  async *pages(query: ListQuery<P> = {} as ListQuery<P>, options: CallOptions = {}): AsyncGenerator<Page<P>> {
    let cursor = (query as { 'page[after]'?: string })['page[after]'];
    do {
      const params = { query: { ...query, ...(cursor ? { 'page[after]': cursor } : {}) } };
      const page = unwrap<Page<P>>(
        (await (this.api.GET as UntypedCall)(this.path, { params, signal: options.signal })) as FetchResult,
        'GET',
        this.path,
      );
      yield page;
      cursor = (page as { meta: { nextCursor?: string } }).meta.nextCursor;
    } while (cursor);
  }

  /** Every resource of the list, oldest first, page by page. */
  async *list(query?: ListQuery<P>, options: CallOptions = {}): AsyncGenerator<ResourceOf<P>> {
    for await (const page of this.pages(query, options)) yield* (page as { data: ResourceOf<P>[] }).data;
  }

  /** The one resource an exact-match filter resolves to, or undefined. */
  protected async findOne(query: ListQuery<P>, options: CallOptions = {}): Promise<ResourceOf<P> | undefined> {
    const { value } = await this.pages(query, options).next();
    return (value as { data: ResourceOf<P>[] } | undefined)?.data[0];
  }
}

export class Sites extends Collection<'/api/v1/sites'> {
  findBySiteCode(siteCode: string, options: CallOptions = {}) {
    return this.findOne({ siteCode }, options);
  }
  findByUniqueID(uniqueID: string, options: CallOptions = {}) {
    return this.findOne({ uniqueID }, options);
  }
  findByUniqueID2(uniqueID2: string, options: CallOptions = {}) {
    return this.findOne({ uniqueID2 }, options);
  }
}

export class SiteVisits extends Collection<'/api/v1/site-visits'> {
  findByClientTicketNumber(clientTicketNumber: string, options: CallOptions = {}) {
    return this.findOne({ clientTicketNumber }, options);
  }

  /**
   * Adds a version of the visit's return label (a PDF). Not retried after an uncertain outcome: a repeat
   * could add a second version.
   */
  async uploadReturnLabel(
    id: string,
    file: FileSource,
    options: UploadOptions & CallOptions = {},
  ): Promise<ReturnLabelUpload> {
    const body = await uploadForm(file, 'return-label.pdf', options);
    const result = await this.api.POST('/api/v1/site-visits/{id}/return-label', {
      params: { path: { id } },
      body: body as never,
      signal: options.signal,
    });
    return unwrap<{ data: ReturnLabelUpload }>(result, 'POST', `${this.path}/${id}/return-label`).data;
  }
}

export class Messages extends Collection<'/api/v1/messages'> {
  /** Adds a version of the message's attachment (PDF, PNG or JPEG). Not retried after an uncertain outcome. */
  async uploadAttachment(
    id: string,
    file: FileSource,
    options: UploadOptions & CallOptions = {},
  ): Promise<FileAttachmentUpload> {
    const body = await uploadForm(file, 'attachment', options);
    const result = await this.api.POST('/api/v1/messages/{id}/file-attachment', {
      params: { path: { id } },
      body: body as never,
      signal: options.signal,
    });
    return unwrap<{ data: FileAttachmentUpload }>(result, 'POST', `${this.path}/${id}/file-attachment`).data;
  }
}

/** Subscription writes are not idempotent and never retried after an uncertain outcome: list, then decide. */
export class WebhookSubscriptions {
  constructor(private readonly api: OpenApiClient) {}

  async list(options: CallOptions = {}): Promise<WebhookSubscription[]> {
    return unwrap<{ data: WebhookSubscription[] }>(
      await this.api.GET('/api/v1/webhook-subscriptions', { signal: options.signal }),
      'GET',
      '/api/v1/webhook-subscriptions',
    ).data;
  }

  async create(body: WebhookSubscriptionCreate, options: CallOptions = {}): Promise<WebhookSubscription> {
    const result = await this.api.POST('/api/v1/webhook-subscriptions', { body, signal: options.signal });
    return unwrap<{ data: WebhookSubscription }>(result, 'POST', '/api/v1/webhook-subscriptions').data;
  }

  async update(id: string, body: WebhookSubscriptionPatch, options: CallOptions = {}): Promise<WebhookSubscription> {
    const result = await this.api.PATCH('/api/v1/webhook-subscriptions/{id}', {
      params: { path: { id } },
      body,
      signal: options.signal,
    });
    return unwrap<{ data: WebhookSubscription }>(result, 'PATCH', `/api/v1/webhook-subscriptions/${id}`).data;
  }
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
   * typed calls' paths are), with the read retry rules; JSON, text, or a file's bytes (a Uint8Array) when the
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
        new Request(urlUnder(baseUrl, path), {
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
