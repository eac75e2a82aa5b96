/** Response header schemas, for the OpenAPI document and the response checks of the tests. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

const ETag = Type.String({ description: 'The quoted version of the resource, e.g. "3". Send it as If-Match.' });

export const etagHeaders = Type.Object({ etag: ETag });

export const createdHeaders = Type.Object({
  etag: ETag,
  'idempotent-replayed': Type.Optional(
    Type.Literal('true', { description: 'Present on a replay of an earlier request with the same Idempotency-Key.' }),
  ),
});

/**
 * On every answer that carries a secret (a client secret, a listener's signing secret, an access token): no
 * cache, shared or private, may keep it (RFC 9111 §5.2.2.5; RFC 6749 §5.1 asks it of token responses).
 */
export const noStoreHeaders = Type.Object({
  'cache-control': Type.Literal('no-store', { description: 'The answer carries a secret: no cache may keep it.' }),
});

/**
 * On every answer of the operator API (`/admin/v1`), success or problem: each carries tenant data for the
 * operator's eyes only, so no cache may keep any of them (docs/decisions.md). Declared on every operator
 * response by openapi-operations.ts (impliedHeaders).
 */
export const OPERATOR_NO_STORE = Type.Literal('no-store', {
  description: 'An operator answer carries tenant data for the operator only: no cache may keep it.',
});

/**
 * `Cache-Control: no-store` on every answer of the scope it is registered in (the operator API's plugin),
 * set before any hook that can refuse, so that the operator token's 401 and 429 carry it too.
 */
export function registerNoStore(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('cache-control', 'no-store');
    done();
  });
}

/** Where the operator API's answers live (its document's prefix too). */
export const OPERATOR_PATHS = '/admin/v1/';

/**
 * `registerNoStore` for what is answered outside the operator API's plugin, before or without a route:
 * the router's refusals (frameworkErrors) and paths no route matches, under the operator's paths.
 */
export function noStoreUnderOperatorPaths(request: FastifyRequest, reply: FastifyReply): void {
  if (request.url.startsWith(OPERATOR_PATHS)) reply.header('cache-control', 'no-store');
}
