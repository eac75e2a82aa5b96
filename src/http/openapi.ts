/**
 * The machine-readable contract: two OpenAPI 3.1.0 documents that @fastify/swagger builds from the route
 * schemas themselves (the schemas that validate and serialise are the schemas published), one for the
 * client API (`/api/v1`, served at GET /api/v1/openapi.json) and one for the operator API (`/admin/v1`,
 * served at GET /admin/v1/openapi.json behind the operator token).
 *
 * Everything is derived from what routes declare, so a new route is documented by being registered:
 * - security from `config.scope` (auth.ts) or the operator plugin (admin-auth.ts), with the scope also
 *   named in the operation's description;
 * - the responses every route can give whether or not it lists them: 400 and 415 for a body, 422 for any
 *   validated input, 404 for a path parameter, 401/403 for a protected route, 429 (client API; operator API:
 *   too many wrong tokens), 500 and 503,
 *   and on every route the parser's 408 and 431;
 * - problem responses as `application/problem+json` (`application/json` on the OAuth token endpoint), 422
 *   as the ValidationProblem form, response headers (`headers` of a response schema) with `required`;
 * - the rate limit's x-ratelimit-* headers on every response of the client API (components.headers);
 * - notes on idempotency, If-Match and pagination for routes whose schemas take those parameters.
 * Non-JSON bodies are declared with media.ts (multipart uploads, binary downloads). Each route's operation is
 * described by openapi-operations.ts; this file registers the documents and finishes them.
 */
import swagger from '@fastify/swagger';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { ComponentIndex } from './components.js';
import {
  canonicaliseHeaderNames,
  describeRoute,
  OAuthProblemComponent,
  type OperationPatch,
  type RouteTransformInput,
} from './openapi-operations.js';
import { PARSER_STATUSES } from './openapi-implied.js';
import type { DocumentDefinition, JsonObject, OpenApiDefinitions, OpenApiDocument } from './openapi-types.js';
import { RATE_LIMIT_HEADER_COMPONENTS } from './rate-limit.js';
import { type ProblemStatus, ValidationProblemSchema } from './schemas.js';

export type { DocumentDefinition, JsonObject, OpenApiDefinitions, OpenApiDocument } from './openapi-types.js';

const DECORATORS = { client: 'clientOpenApiDocument', operator: 'operatorOpenApiDocument' } as const;

export function clientOpenApiDocument(app: FastifyInstance): OpenApiDocument {
  return (app as unknown as Record<string, () => OpenApiDocument>)[DECORATORS.client]!();
}

export function operatorOpenApiDocument(app: FastifyInstance): OpenApiDocument {
  return (app as unknown as Record<string, () => OpenApiDocument>)[DECORATORS.operator]!();
}

/**
 * The rate limit's headers (rate-limit.ts), which every answer of a rate-limited document carries, errors
 * and 429 included: declared once under components.headers and referenced from every response, except
 * those that Node's parser gives before the service sees the request (PARSER_STATUSES: 408, 431).
 */
function declareRateLimitHeaders(document: JsonObject): void {
  document.components.headers = { ...document.components.headers, ...RATE_LIMIT_HEADER_COMPONENTS };
  const references = Object.fromEntries(
    Object.keys(RATE_LIMIT_HEADER_COMPONENTS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );
  for (const item of Object.values(document.paths as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, JsonObject>)) {
        if (PARSER_STATUSES.includes(Number(status) as ProblemStatus)) continue;
        response.headers = { ...response.headers, ...references };
      }
    }
  }
}

/** The finished document: operation fix-ups, security defaults, webhooks, and the tags in use. */
function finishDocument(
  definition: DocumentDefinition,
  document: JsonObject,
  patches: Map<string, OperationPatch>,
): OpenApiDocument {
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, JsonObject>>)) {
    for (const [method, operation] of Object.entries(item)) {
      patches.get(`${method} ${path}`)?.(operation);
      canonicaliseHeaderNames(operation);
      if (!operation.security && definition.security) operation.security = definition.security;
    }
  }
  patches.clear();
  if (definition.rateLimited) declareRateLimitHeaders(document);
  if (definition.webhooks) document.webhooks = definition.webhooks;
  for (const [name, annotation] of Object.entries(definition.schemaAnnotations ?? {})) {
    if (document.components.schemas[name]) Object.assign(document.components.schemas[name], annotation);
  }
  const used = new Set<string>();
  for (const item of [
    ...Object.values(document.paths as JsonObject),
    ...Object.values((document.webhooks ?? {}) as JsonObject),
  ]) {
    for (const operation of Object.values(item as Record<string, JsonObject>)) {
      for (const tag of (operation.tags as string[] | undefined) ?? []) used.add(tag);
    }
  }
  const listed = definition.tags.filter((tag) => used.has(tag.name));
  const unlisted = [...used]
    .filter((name) => !definition.tags.some((tag) => tag.name === name))
    .map((name) => ({ name }));
  document.tags = [...listed, ...unlisted];
  pruneUnusedSchemas(document);
  return document as OpenApiDocument;
}

/** Drops shared schemas that nothing in this document refers to (each document uses a subset). */
function pruneUnusedSchemas(document: JsonObject): void {
  const schemas = document.components.schemas as JsonObject;
  const referenced = (value: unknown) =>
    [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"/]+)"/g)].map((match) => match[1]!);
  const { components, ...rest } = document;
  const used = new Set<string>();
  const pending = referenced({ ...rest, components: { ...components, schemas: {} } });
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (used.has(name)) continue;
    used.add(name);
    pending.push(...referenced(schemas[name]));
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}

/** The base address of the environment this process runs as (its token endpoint is the one to use). */
export function ownBaseUrl(config: Config): string {
  return (
    (config.environment === 'production' ? config.productionBaseUrl : config.sandboxBaseUrl) ?? config.publicBaseUrl
  );
}

/**
 * This environment's address first (generators take servers[0] as the default base address), then the
 * other environment's, only when it is configured: an address that is not known is not guessed.
 */
export function documentServers(config: Config): JsonObject[] {
  const production = config.environment === 'production';
  const own = { url: ownBaseUrl(config), description: production ? 'Production' : 'Sandbox' };
  const other = production ? config.sandboxBaseUrl : config.productionBaseUrl;
  if (other === undefined || other === own.url) return [own];
  return [own, { url: other, description: production ? 'Sandbox' : 'Production' }];
}

function swaggerOptions(config: Config, definition: DocumentDefinition, decorator: string) {
  const patches = new Map<string, OperationPatch>();
  const components = new ComponentIndex(definition.components);
  return {
    decorator,
    openapi: {
      openapi: '3.1.0',
      info: definition.info,
      servers: documentServers(config),
      components: { schemas: components.components(), securitySchemes: definition.securitySchemes },
    },
    // Paths keep their /api/v1 prefix; servers are the base addresses (DECISIONS: OpenAPI).
    stripBasePath: false,
    // OpenAPI 3.1 is JSON Schema 2020-12: `const` is kept as written.
    convertConstToEnum: false,
    refResolver: {
      // Shared schemas (app.addSchema, with an $id) become components named by their $id.
      buildLocalReference: (json: JsonObject, _baseUri: unknown, _fragment: unknown, index: number) =>
        typeof json.$id === 'string' ? json.$id.replace(/[^A-Za-z0-9._-]/g, '_') : `def-${index}`,
    },
    transform: (input: RouteTransformInput) => describeRoute(definition, components, input, patches),
    transformObject: ({ openapiObject }: { openapiObject: JsonObject }) =>
      finishDocument(definition, openapiObject, patches),
  };
}

/** GET /api/v1/openapi.json's answer, named in the client document. */
export const OpenApiDocumentSchema = Type.Object(
  {},
  { additionalProperties: true, description: 'The OpenAPI 3.1.0 document.' },
);

/**
 * Registers both documents. Call before any route is registered: the documents see the routes added
 * after this point (in any plugin).
 */
export async function registerOpenApi(
  app: FastifyInstance,
  config: Config,
  definitions: OpenApiDefinitions,
): Promise<void> {
  // Named in the documents for 422 responses and token endpoint errors (routes declare Problem, or the
  // OAuth shape inline).
  app.addSchema(ValidationProblemSchema);
  app.addSchema(OAuthProblemComponent);
  await app.register(swagger, swaggerOptions(config, definitions.client, DECORATORS.client) as never);
  await app.register(swagger, swaggerOptions(config, definitions.operator, DECORATORS.operator) as never);

  let served: string | undefined;
  app.get(
    '/api/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        description:
          'The machine-readable contract of the client API (OpenAPI 3.1.0). No token needed; counted by the rate limit.',
        tags: ['Documentation'],
        security: [],
        response: { 200: OpenApiDocumentSchema },
      },
    },
    async (_request, reply) => {
      served ??= JSON.stringify(clientOpenApiDocument(app));
      return reply.type('application/json; charset=utf-8').send(served);
    },
  );
}

/** GET /admin/v1/openapi.json; register inside the operator API's plugin so that its token guards it. */
export function registerOperatorOpenApiRoute(operator: FastifyInstance): void {
  let served: string | undefined;
  operator.get('/admin/v1/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    served ??= JSON.stringify(operatorOpenApiDocument(operator));
    return reply.type('application/json; charset=utf-8').send(served);
  });
}
