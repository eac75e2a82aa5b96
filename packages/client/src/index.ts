export { createClient } from './client.js';
export type { ClientOptions, SiteServicesClient } from './client.js';
export { Collection, Sites, SiteVisits, Messages, WebhookSubscriptions } from './resources.js';
export type { CallOptions, CreateOptions, CreateResult, UpdateOptions } from './resources.js';
export {
  ApiError,
  CredentialsError,
  NetworkError,
  SiteServicesError,
  UncertainResultError,
  problemSlug,
} from './errors.js';
export type { ExistingResource, ProblemDetails } from './errors.js';
export { DEFAULT_RETRY, backoffDelay, systemRuntime } from './retry.js';
export type { RetryOptions, Runtime } from './retry.js';
export { classifyRequest } from './transport.js';
export { RateLimitPacer } from './pacing.js';
export type { FetchLike, RequestKind, RetryEvent } from './transport.js';
export type { TokenResponse, ClientCredentials } from './tokens.js';
export type { FileSource, UploadOptions } from './uploads.js';
export * from './types.js';
export { verifyWebhook, WebhookVerificationError } from './webhooks.js';
export type { VerifyWebhookInput, WebhookHeaders } from './webhooks.js';
export type { paths, components, webhooks, operations } from './generated/api.js';
