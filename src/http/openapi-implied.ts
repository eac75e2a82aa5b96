/**
 * What every route of a shape answers, whether or not it lists it (openapi-operations.ts adds these to the
 * route's operation): the parser's answers (408, 431), the statuses its body, parameters, security and the
 * rate limit imply, and the headers each implied or declared status carries on it.
 */
import type { FastifySchema } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { ADMIN_SECURITY_SCHEME } from './admin-auth.js';
import { SECURITY_SCHEME } from './auth.js';
import { OPERATOR_NO_STORE } from './headers.js';
import { acceptedMediaTypes } from './media.js';
import type { DocumentDefinition, JsonObject } from './openapi-types.js';
import { type ProblemStatus, problemResponses } from './schemas.js';

const RETRY_AFTER = Type.Integer({ minimum: 0, description: 'Seconds to wait before retrying.' });
const WWW_AUTHENTICATE = Type.String({
  description: 'The Bearer challenge (RFC 6750), naming the error and, on 403, the missing scope.',
});

export function isObjectSchema(schema: unknown): schema is JsonObject & { properties: Record<string, JsonObject> } {
  return typeof schema === 'object' && schema !== null && typeof (schema as JsonObject).properties === 'object';
}

/** The security requirements a route declares. */
export function securityOf(schema: FastifySchema | undefined): JsonObject[] {
  return ((schema as JsonObject | undefined)?.security as JsonObject[] | undefined) ?? [];
}

/** The request headers a route takes, lower-cased. */
export function requestHeaders(schema: JsonObject): string[] {
  return isObjectSchema(schema.headers) ? Object.keys(schema.headers.properties).map((name) => name.toLowerCase()) : [];
}

/**
 * What Node's HTTP parser answers before any route or hook runs (clientErrorHandler in error-handler.ts): a
 * request not received within the request timeout (its headers or its body), headers over 16 KiB. Any
 * operation can get them, always as a problem (the token endpoint's too), without the headers the service's
 * own answers carry (the rate limit's).
 */
export const PARSER_STATUSES: readonly ProblemStatus[] = [408, 431];

/**
 * The time a request has to arrive (REQUEST_TIMEOUT_MS), as the documents say it: `120 seconds`, `2.5 seconds`,
 * `1,800 seconds` (at most three decimals, thousands grouped). Written out rather than with toLocaleString:
 * the documents are built at every start, and Intl's first use loads its locale data there (30-100 ms).
 */
export function requestTimeoutText(timeoutMs: number): string {
  const [whole = '0', decimals] = String(Number((timeoutMs / 1000).toFixed(3))).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return `${decimals === undefined ? grouped : `${grouped}.${decimals}`} seconds`;
}

/** The 408's description in the documents. */
function requestTimeoutDescription(timeoutMs: number): string {
  return `The request did not arrive completely within ${requestTimeoutText(timeoutMs)} (a slow upload, a stalled connection): nothing was done, and the connection is closed.`;
}

/** The parser's answers (PARSER_STATUSES) as a route shows them. */
export function parserResponses(
  statuses: ProblemStatus[],
  definition: DocumentDefinition,
  oauthErrors: boolean,
): Record<string, JsonObject> {
  const responses = problemResponses(statuses, {
    408: requestTimeoutDescription(definition.requestTimeoutMs),
  }) as Record<string, JsonObject>;
  if (!oauthErrors) return responses;
  // Raised before the route is known, so not in the endpoint's OAuth shape.
  const note =
    'Answered before the request reaches this endpoint: a problem (application/problem+json), not an OAuth error.';
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      { ...response, description: `${response.description} ${note}` },
    ]),
  );
}

/** Response statuses every route of this shape can answer, whether or not it lists them. */
export function impliedStatuses(
  schema: JsonObject,
  definition: DocumentDefinition,
  oauthErrors: boolean,
): ProblemStatus[] {
  const statuses: ProblemStatus[] = [...PARSER_STATUSES];
  const body = schema.body as JsonObject | undefined;
  if (body !== undefined) statuses.push(413);
  if (body !== undefined && !oauthErrors) {
    if (acceptedMediaTypes(body).some((mediaType) => !mediaType.startsWith('multipart/'))) statuses.push(400);
    statuses.push(415);
  }
  // A path parameter can be malformed (bad percent-encoding) before it can be unknown.
  if (schema.params !== undefined && !oauthErrors) statuses.push(400, 404);
  // SPEC Idempotent creates rule 5: a replay whose resource is no longer accessible is 404.
  if (requestHeaders(schema).includes('idempotency-key')) statuses.push(404);
  if (!oauthErrors && (body ?? schema.params ?? schema.querystring ?? schema.headers) !== undefined) statuses.push(422);
  const security = securityOf(schema as FastifySchema);
  if (security.some((requirement) => SECURITY_SCHEME in requirement)) statuses.push(401, 403);
  // The operator API refuses an address that sent too many wrong tokens (admin-auth.ts).
  if (security.some((requirement) => ADMIN_SECURITY_SCHEME in requirement)) statuses.push(401, 429);
  if (definition.rateLimited) statuses.push(429);
  // SPEC: 5xx may come from any operation; a 500 is a bare internal-error problem.
  statuses.push(500, 503);
  return [...new Set(statuses)];
}

/** Response headers every response of this status carries on this route: name → required. */
export function impliedHeaders(
  status: string,
  schema: JsonObject,
): Record<string, { schema: TSchema; required: boolean }> {
  const headers: Record<string, { schema: TSchema; required: boolean }> = {};
  if (status === '429') headers['retry-after'] = { schema: RETRY_AFTER, required: true };
  if (status === '503') headers['retry-after'] = { schema: RETRY_AFTER, required: false };
  if (status === '409' && requestHeaders(schema).includes('idempotency-key'))
    headers['retry-after'] = { schema: RETRY_AFTER, required: false };
  const clientRoute = securityOf(schema as FastifySchema).some((requirement) => SECURITY_SCHEME in requirement);
  // Every 401 challenges; a 403 names the missing scope, but a 403 for a feature the operator has not
  // enabled for the client (webhook access) has no scope to name.
  if (clientRoute && status === '401') headers['www-authenticate'] = { schema: WWW_AUTHENTICATE, required: true };
  if (clientRoute && status === '403') headers['www-authenticate'] = { schema: WWW_AUTHENTICATE, required: false };
  // Every operator answer is kept by no cache (headers.ts, registerNoStore), except the parser's, which
  // come before the operator API's hooks.
  const operatorRoute = securityOf(schema as FastifySchema).some((requirement) => ADMIN_SECURITY_SCHEME in requirement);
  if (operatorRoute && !PARSER_STATUSES.includes(Number(status) as ProblemStatus))
    headers['cache-control'] = { schema: OPERATOR_NO_STORE, required: true };
  return headers;
}
