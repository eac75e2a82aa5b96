/**
 * The problem types the service answers with (RFC 9457 `type`): each slug's status, title and the help its
 * page gives, one entry per type. `Problem` (problem.ts) names one by its slug.
 */

export const PROBLEM_TYPES = {
  'malformed-request': {
    status: 400,
    title: 'Malformed request',
    help: 'The request body could not be parsed, or its header lines could be read two ways. Send well-formed JSON encoded as UTF-8 (or the form encoding the endpoint documents), each of Host, Authorization, Content-Type and Idempotency-Key on one line at most, and no transfer coding but chunked.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    help: 'Send a valid, unexpired bearer token from POST /api/v1/oauth/token in the Authorization header. After a 401, fetch a fresh token once; a second 401 means the credentials are wrong.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    help: 'The token lacks the scope this operation needs, or the feature is not enabled for your client. Request a token with the scope, or ask the operator to enable it.',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    help: 'The resource does not exist or is not owned by your client. Check the id, or the referenced siteCode, itemName or visit id.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    help: 'The path exists but does not support this method; the Allow header lists the methods it does.',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    help: 'The request was not received completely in time. Send the whole request promptly; large uploads need a connection that sustains them.',
  },
  'duplicate-resource': {
    status: 409,
    title: 'Duplicate resource',
    help: 'A resource with the same unique value (siteCode, clientTicketNumber, ...) already exists for your client. The problem names it in existing, {type, id} as its data shows them (a site: GET /api/v1/sites/{id}); use it instead of creating it again.',
  },
  'version-conflict': {
    status: 409,
    title: 'Version conflict',
    help: 'The If-Match ETag does not match the current version. GET the resource again, reapply your change, and PATCH with the new ETag.',
  },
  'idempotency-conflict': {
    status: 409,
    title: 'Idempotency key reused with a different request',
    help: 'An Idempotency-Key may only be reused with the identical body. Use a new key for a different request.',
  },
  'idempotency-pending': {
    status: 409,
    title: 'Request with this idempotency key is in progress',
    help: 'A request with the same Idempotency-Key is still being processed. Retry later with the same key and the same body.',
  },
  'invalid-project': {
    status: 409,
    title: 'Invalid project',
    help: 'The projectId is unknown, belongs to another client, or is not Active. GET /api/v1/projects lists the projects you can use.',
  },
  'invalid-site-asset': {
    status: 409,
    title: 'Invalid site asset',
    help: "Every siteAssetId must be a site asset of the same site as the visit. Check the ids of the visit's site.",
  },
  'site-asset-conflict': {
    status: 409,
    title: 'Site assets belong to another site',
    help: 'Moving a visit to another site requires replacing its siteAssetIds in the same request (an empty array clears them).',
  },
  'invalid-state': {
    status: 409,
    title: 'Invalid state for this action',
    help: 'The resource is not in a state that allows this action. Read it again and check its status.',
  },
  'signing-version-conflict': {
    status: 409,
    title: 'Signing version changed concurrently',
    help: "The subscription's signing version changed while your update was in flight. List the subscriptions again and repeat the update if it is still needed.",
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    help: 'Uploaded files may be at most 10 MiB (10,485,760 bytes).',
  },
  'headers-too-large': {
    status: 431,
    title: 'Request header fields too large',
    help: 'The request headers exceed 16 KiB in total. Send fewer or shorter headers; a bearer token is never longer than 4 KiB.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    help: "Send JSON bodies as application/json and uploads as multipart/form-data. Return labels must be PDF; message attachments PDF, PNG or JPEG, judged by the file's content.",
  },
  'validation-error': {
    status: 422,
    title: 'Validation failed',
    help: 'One or more fields are missing or invalid; the errors member names each field with its messages. Fix the data before retrying.',
  },
  'subscription-limit-reached': {
    status: 422,
    title: 'Subscription limit reached',
    help: "Your client already has as many active webhook subscriptions as it may have: 16 unless the operator set another limit (the problem's maxActiveSubscriptions member says how many). Deactivate one you no longer need (PATCH isActive false) before creating or activating another, or ask the operator to raise the limit. Subscriptions over the limit keep working. A create can also meet the limit on subscriptions held in all, 100 inactive ones beside the active limit (maxSubscriptions): there is no delete, so reuse an inactive subscription (PATCH its targetUrl, eventTypes and secret, and isActive true).",
  },
  'file-version-limit-reached': {
    status: 422,
    title: 'File version limit reached',
    help: 'A return label or a message attachment may have at most 100 versions, and every version is kept. Its 100th version is its last: the download serves it, and a further upload is refused.',
  },
  'storage-limit-reached': {
    status: 422,
    title: 'Storage limit reached',
    help: "Your uploaded files, every version of every return label and message attachment, may hold 10 GiB in all unless the operator set another limit (the problem's storageLimitBytes and storageUsedBytes members say how much). Versions are kept and cannot be deleted: ask the operator to raise the limit.",
  },
  'listener-limit-reached': {
    status: 422,
    title: 'Webhook listener limit reached',
    help: 'A client may have 5 sandbox webhook listeners open at once. Stop one (Ctrl-C in its svc listen, or DELETE /api/v1/sandbox/webhook-listeners/{id}) or wait for one to close, then open another.',
    sandboxOnly: true,
  },
  'upgrade-required': {
    status: 426,
    title: 'Upgrade required',
    help: "A webhook listener's stream is a WebSocket: open it with a WebSocket client (the request's Upgrade: websocket), not a plain HTTP request. svc listen does this for you.",
    sandboxOnly: true,
  },
  'rate-limit-exceeded': {
    status: 429,
    title: 'Rate limit exceeded',
    help: 'Too many requests from your address in the last minute. Wait for Retry-After seconds, reduce concurrency, and back off with jitter.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal error',
    help: 'The service failed unexpectedly. A 5xx does not prove that a write failed: retry creates with the same Idempotency-Key, and read before repeating other writes.',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    help: "The service or one of its dependencies (database, DNS) is temporarily unavailable, or your client's requests already use as much of the database at once as one client may (the detail says which). Retry with bounded backoff; honour Retry-After when present.",
  },
} as const satisfies Record<string, { status: number; title: string; help: string; sandboxOnly?: true }>;

export type ProblemSlug = keyof typeof PROBLEM_TYPES;

/**
 * The problem types an environment can answer with: a sandbox-only feature's types (sandboxOnly) leave
 * no trace in production's documents and pages. The routes that raise them name them themselves.
 */
export function problemTypesOf(environment: 'sandbox' | 'production') {
  return Object.entries(PROBLEM_TYPES).filter(
    ([, problem]) => environment === 'sandbox' || !('sandboxOnly' in problem),
  ) as [ProblemSlug, (typeof PROBLEM_TYPES)[ProblemSlug]][];
}
