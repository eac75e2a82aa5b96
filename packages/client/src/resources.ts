/**
 * The resource helpers of the typed client: sites, site visits and messages (create with an Idempotency-Key,
 * get, update with If-Match, cursor listing) and webhook subscriptions, over the openapi-fetch client that
 * client.ts builds. Each unwraps `{data}` and throws `ApiError` on a problem answer.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from 'openapi-fetch';
import { ApiError, NetworkError, toProblem } from './errors.js';
import type { paths } from './generated/api.js';
import type {
  CollectionPath,
  CreateBody,
  FileAttachmentUpload,
  ListQuery,
  Page,
  PatchBody,
  ResourceOf,
  ReturnLabelUpload,
  WebhookSubscription,
  WebhookSubscriptionCreate,
  WebhookSubscriptionPatch,
} from './types.js';
import { type FileSource, uploadForm, type UploadOptions } from './uploads.js';

/** openapi-fetch's methods, called with a path chosen at run time (the generic resource client). */
type UntypedCall = (path: string, init: unknown) => Promise<unknown>;
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

export type OpenApiClient = Client<paths>;
interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

export function unwrap<T>(result: FetchResult, method: string, path: string): T {
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

  /** A new version of the resource's file `part` (a multipart upload; its name as `uploadForm` gives it). */
  protected async uploadFile<T>(
    id: string,
    part: string,
    file: FileSource,
    fallbackName: string,
    options: UploadOptions & CallOptions,
  ): Promise<T> {
    const body = await uploadForm(file, fallbackName, options);
    const result = (await (this.api.POST as UntypedCall)(`${this.path}/{id}/${part}`, {
      params: { path: { id } },
      body,
      signal: options.signal,
    })) as FetchResult;
    return unwrap<{ data: T }>(result, 'POST', `${this.path}/${id}/${part}`).data;
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
    return this.uploadFile<ReturnLabelUpload>(id, 'return-label', file, 'return-label.pdf', options);
  }
}

export class Messages extends Collection<'/api/v1/messages'> {
  /** Adds a version of the message's attachment (PDF, PNG or JPEG). Not retried after an uncertain outcome. */
  async uploadAttachment(
    id: string,
    file: FileSource,
    options: UploadOptions & CallOptions = {},
  ): Promise<FileAttachmentUpload> {
    return this.uploadFile<FileAttachmentUpload>(id, 'file-attachment', file, 'attachment', options);
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
