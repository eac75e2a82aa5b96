/**
 * Typed errors of the client. Every answer the API refuses becomes an `ApiError` carrying the problem
 * details (RFC 9457, "Errors" in the API reference): `slug` is the last path segment of `type`
 * (`validation-error`, `duplicate-resource`, …) and `fieldErrors` the `errors` member of a 422.
 */

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: Record<string, string[]>;
  /** On a 422 naming only the first 50 failing fields: how many more failed. */
  errorsOmitted?: number;
  /** On a 409 duplicate-resource: the resource of your client that has the unique value already. */
  existing?: ExistingResource;
  [member: string]: unknown;
}

/** A resource as its `data` names it: `type` (`sites`, `site-visits`, …) and `id`. */
export interface ExistingResource {
  type: string;
  id: string;
}

/** Base class: `instanceof SiteServicesError` catches everything this package throws on purpose. */
export class SiteServicesError extends Error {
  override name = 'SiteServicesError';
}

/** The API answered with an error status and (normally) a problem document. */
export class ApiError extends SiteServicesError {
  override name = 'ApiError';
  readonly status: number;
  readonly slug: string;
  readonly problem: ProblemDetails;
  readonly fieldErrors: Record<string, string[]>;
  /**
   * On a 409 duplicate-resource: the resource that has the unique value already (the site with that siteCode,
   * the visit with that clientTicketNumber), e.g. `{ type: 'sites', id: 'site_…' }`; read it with
   * `client.sites.get(existing.id)`. Absent when the service could not name it at that moment.
   */
  readonly existing?: ExistingResource;
  /**
   * On a create (sites, site visits, messages): the Idempotency-Key it was sent with, the client's own when
   * the caller gave none. After a 5xx or a network failure the create may have run: repeat it with this key
   * and the same body within 24 hours and the service answers with the one resource ("Idempotent creates" in
   * the API reference).
   */
  idempotencyKey?: string;

  constructor(
    problem: ProblemDetails,
    readonly method: string,
    readonly path: string,
    readonly headers: Headers = new Headers(),
  ) {
    const existing = existingOf(problem);
    super(
      `${method} ${path}: ${problem.status} ${problem.title}: ${problem.detail}${existing ? ` (existing: ${existing.id})` : ''}`,
    );
    this.status = problem.status;
    this.problem = problem;
    this.slug = problemSlug(problem.type);
    this.fieldErrors = problem.errors ?? {};
    if (existing) this.existing = existing;
  }
}

/**
 * The client credentials are wrong or revoked: the token endpoint answered 401, or a protected request was
 * refused with 401 again right after a fresh token. Retrying will not help.
 */
export class CredentialsError extends SiteServicesError {
  override name = 'CredentialsError';
  constructor(
    message: string,
    readonly problem?: ProblemDetails,
  ) {
    super(message);
  }
}

/**
 * A write that is not safe to repeat blindly (PATCH, uploads, webhook-subscription writes) got no definite
 * answer: the connection failed, timed out, or the service answered 5xx, which does not prove the write
 * failed. Read the resource (or list the subscriptions / file versions) before trying again.
 */
export class UncertainResultError extends SiteServicesError {
  override name = 'UncertainResultError';
  /** The 5xx answer's headers (its Retry-After, say); empty after a network failure. */
  readonly headers: Headers;
  constructor(
    readonly method: string,
    readonly path: string,
    readonly reason: string,
    readonly problem?: ProblemDetails,
    options?: { cause?: unknown; headers?: Headers },
  ) {
    super(
      `${method} ${path}: the result is uncertain (${reason}); read the current state before repeating this write`,
      options && 'cause' in options ? { cause: options.cause } : undefined,
    );
    this.headers = options?.headers ?? new Headers();
  }
}

/** The request could not be completed (network failure or timeout) and its retries, if any, ran out. */
export class NetworkError extends SiteServicesError {
  override name = 'NetworkError';
  /** On a create: the Idempotency-Key it was sent with; repeat the create with it (as ApiError's). */
  idempotencyKey?: string;
  /**
   * @param options.url The full address tried, named in the message (a wrong base address, host or port is
   * then plain to see); `path` alone when absent.
   */
  constructor(
    readonly method: string,
    readonly path: string,
    options: { cause: unknown; url?: string },
  ) {
    super(`${method} ${options.url ?? path}: ${describeCause(options.cause)}`, { cause: options.cause });
  }
}

/** The problem's `existing` member when it is one (a type and an id, both strings). */
export function existingOf(problem: ProblemDetails): ExistingResource | undefined {
  const existing: unknown = problem.existing;
  if (typeof existing !== 'object' || existing === null) return undefined;
  const { type, id } = existing as Record<string, unknown>;
  return typeof type === 'string' && typeof id === 'string' ? { type, id } : undefined;
}

/**
 * The last segment of a problem type URI (`.../problems/not-found` → `not-found`), trailing `/` and `#`
 * ignored. They are dropped by a walk back from the end: the pattern `/[/#]+$/` is tried from every slash of a
 * run and reads the run to its end each time, quadratic in the run's length: a type the client did not write
 * (an answer's, a proxy's) with 100,000 slashes before its last letter held the caller for 20 s.
 */
export function problemSlug(type: string): string {
  let end = type.length;
  while (end > 0 && (type[end - 1] === '/' || type[end - 1] === '#')) end--;
  const trimmed = type.slice(0, end);
  return trimmed.slice(Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('#')) + 1);
}

/** An answer's body: its JSON, or its text when it is not JSON (a proxy's page, say). */
export async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A problem document from an error body; a body that is not one is described by its status. */
export function toProblem(status: number, body: unknown, statusText = ''): ProblemDetails {
  if (body && typeof body === 'object' && typeof (body as ProblemDetails).type === 'string') {
    const problem = body as ProblemDetails;
    return { ...problem, status: typeof problem.status === 'number' ? problem.status : status };
  }
  const text = typeof body === 'string' ? body.slice(0, 200) : '';
  return {
    type: 'about:blank',
    title: statusText || `HTTP ${status}`,
    status,
    detail: text || `the service answered ${status}`,
  };
}

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    const code =
      inner && typeof inner === 'object' && 'code' in inner ? ` (${String((inner as { code: unknown }).code)})` : '';
    return `${cause.message}${code}`;
  }
  return String(cause);
}
