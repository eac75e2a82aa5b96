/** SPEC's endpoint table, as data for the document tests. */

export interface SpecEndpoint {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  /** Every status of SPEC's table (success and others). */
  statuses: number[];
  /** The scope DECISIONS assigns; null for the token endpoint. */
  scope: string | null;
  idempotencyKey?: boolean;
  ifMatch?: boolean;
  /** Success responses carry an ETag. */
  etag?: boolean;
  multipart?: boolean;
  /** Media types of a binary download. */
  binary?: string[];
}

export const SPEC_ENDPOINTS: SpecEndpoint[] = [
  { method: 'POST', path: '/api/v1/oauth/token', statuses: [200, 400, 401], scope: null },
  { method: 'GET', path: '/api/v1/sites', statuses: [200, 401, 403, 422], scope: 'sites:read' },
  {
    method: 'POST',
    path: '/api/v1/sites',
    statuses: [201, 401, 403, 409, 422, 429],
    scope: 'sites:write',
    idempotencyKey: true,
    etag: true,
  },
  { method: 'GET', path: '/api/v1/sites/{id}', statuses: [200, 401, 403, 404], scope: 'sites:read', etag: true },
  {
    method: 'PATCH',
    path: '/api/v1/sites/{id}',
    statuses: [200, 401, 403, 404, 409, 422],
    scope: 'sites:write',
    ifMatch: true,
    etag: true,
  },
  { method: 'GET', path: '/api/v1/projects', statuses: [200, 401, 403, 422], scope: 'site-visits:read' },
  { method: 'GET', path: '/api/v1/items', statuses: [200, 401, 403, 422], scope: 'site-visits:read' },
  { method: 'GET', path: '/api/v1/site-visits', statuses: [200, 401, 403], scope: 'site-visits:read' },
  {
    method: 'POST',
    path: '/api/v1/site-visits',
    statuses: [201, 401, 403, 404, 409, 422, 429],
    scope: 'site-visits:write',
    idempotencyKey: true,
    etag: true,
  },
  {
    method: 'GET',
    path: '/api/v1/site-visits/{id}',
    statuses: [200, 401, 403, 404],
    scope: 'site-visits:read',
    etag: true,
  },
  {
    method: 'PATCH',
    path: '/api/v1/site-visits/{id}',
    statuses: [200, 401, 403, 404, 409, 422],
    scope: 'site-visits:write',
    ifMatch: true,
    etag: true,
  },
  {
    method: 'POST',
    path: '/api/v1/site-visits/{id}/return-label',
    statuses: [201, 401, 403, 404, 413, 415, 422],
    scope: 'site-visits:write',
    multipart: true,
  },
  {
    method: 'GET',
    path: '/api/v1/site-visits/{id}/return-label',
    statuses: [200, 401, 403, 404],
    scope: 'site-visits:read',
    binary: ['application/pdf'],
  },
  { method: 'GET', path: '/api/v1/messages', statuses: [200, 401, 403], scope: 'site-visits:read' },
  {
    method: 'POST',
    path: '/api/v1/messages',
    statuses: [201, 401, 403, 404, 422, 429],
    scope: 'site-visits:write',
    idempotencyKey: true,
    etag: true,
  },
  {
    method: 'GET',
    path: '/api/v1/messages/{id}',
    statuses: [200, 401, 403, 404],
    scope: 'site-visits:read',
    etag: true,
  },
  {
    method: 'PATCH',
    path: '/api/v1/messages/{id}',
    statuses: [200, 401, 403, 404, 409, 422],
    scope: 'site-visits:write',
    ifMatch: true,
    etag: true,
  },
  {
    method: 'POST',
    path: '/api/v1/messages/{id}/file-attachment',
    statuses: [201, 401, 403, 404, 413, 415, 422],
    scope: 'site-visits:write',
    multipart: true,
  },
  {
    method: 'GET',
    path: '/api/v1/messages/{id}/file-attachment',
    statuses: [200, 401, 403, 404],
    scope: 'site-visits:read',
    binary: ['application/pdf', 'image/png', 'image/jpeg'],
  },
  { method: 'GET', path: '/api/v1/webhook-subscriptions', statuses: [200, 401, 403], scope: 'webhooks:read' },
  { method: 'POST', path: '/api/v1/webhook-subscriptions', statuses: [201, 422, 503], scope: 'webhooks:write' },
  {
    method: 'PATCH',
    path: '/api/v1/webhook-subscriptions/{id}',
    statuses: [200, 409, 422, 503],
    scope: 'webhooks:write',
  },
  // Not SPEC's: the sandbox simulator of issue 10 (the document tests run in the sandbox environment).
  {
    method: 'POST',
    path: '/api/v1/sandbox/site-visits/{id}/simulate',
    statuses: [200, 401, 403, 404, 409, 422, 429],
    scope: 'site-visits:write',
  },
];
