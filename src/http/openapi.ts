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
 *   validated input, 404 for a path parameter, 401/403 for a protected route, 429 (client API) and 503;
 * - problem responses as `application/problem+json` (`application/json` on the OAuth token endpoint), 422
 *   as the ValidationProblem form, response headers (`headers` of a response schema) with `required`;
 * - the rate limit's x-ratelimit-* headers on every response of the client API (components.headers);
 * - notes on idempotency, If-Match and pagination for routes whose schemas take those parameters.
 * Non-JSON bodies are declared with media.ts (multipart uploads, binary downloads).
 */
import { STATUS_CODES } from 'node:http';
import swagger, { formatParamUrl } from '@fastify/swagger';
import { type TSchema, Type } from 'typebox';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { Config } from '../config.js';
import { ADMIN_SECURITY_SCHEME } from './admin-auth.js';
import { ComponentIndex, type ComponentDefinitions } from './components.js';
import { SECURITY_SCHEME } from './auth.js';
import { bodyTooLargeDetail } from './body-limit.js';
import { RATE_LIMIT_HEADER_COMPONENTS } from './rate-limit.js';
import { MULTIPART_FORM_DATA } from './media.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './pagination.js';
import {
  OAuthProblemSchema,
  PROBLEM_ID,
  type ProblemStatus,
  problemResponses,
  VALIDATION_PROBLEM_ID,
  ValidationProblemSchema,
} from './schemas.js';

/** A JSON object of the document (OpenAPI objects are open-ended; the tests check their shape). */
// biome-ignore lint/suspicious/noExplicitAny: the generated document is walked as loose JSON.
export type JsonObject = Record<string, any>;

export interface OpenApiDocument extends JsonObject {
  openapi: string;
  info: JsonObject;
  servers: JsonObject[];
  paths: Record<string, Record<string, JsonObject>>;
  components: JsonObject;
}

/** What differs between the two documents; the texts come from the caller (openapi-description.ts). */
export interface DocumentDefinition {
  /** Only routes under this prefix belong to the document. */
  prefix: string;
  info: JsonObject;
  securitySchemes: JsonObject;
  /** Tags in display order, with descriptions; tags used by routes but not listed are appended. */
  tags: { name: string; description?: string }[];
  /** Requirement applied to operations that declare none. */
  security?: JsonObject[];
  /**
   * The resources and shared shapes named in components.schemas (components.ts); routes' bodies and
   * responses refer to them. Unused ones are left out of the document.
   */
  components: ComponentDefinitions;
  /** Top-level `webhooks` map (OpenAPI 3.1); its bodies refer to named components. */
  webhooks?: JsonObject;
  /** Members merged into named component schemas (e.g. the Problem schema's list of types). */
  schemaAnnotations?: Record<string, JsonObject>;
  /** Counted by the client rate limit: every operation may answer 429. */
  rateLimited: boolean;
}

export interface OpenApiDefinitions {
  client: DocumentDefinition;
  operator: DocumentDefinition;
}

const DECORATORS = { client: 'clientOpenApiDocument', operator: 'operatorOpenApiDocument' } as const;

export function clientOpenApiDocument(app: FastifyInstance): OpenApiDocument {
  return (app as unknown as Record<string, () => OpenApiDocument>)[DECORATORS.client]!();
}

export function operatorOpenApiDocument(app: FastifyInstance): OpenApiDocument {
  return (app as unknown as Record<string, () => OpenApiDocument>)[DECORATORS.operator]!();
}

/** Fix-ups of one operation that @fastify/swagger cannot express, applied once the document is built. */
type OperationPatch = (operation: JsonObject) => void;

interface RouteTransformInput {
  schema: FastifySchema | undefined;
  url: string;
  route: RouteOptions;
}

/** The token endpoint's error shape, named in the documents. */
const OAuthProblemComponent = { ...OAuthProblemSchema, $id: 'OAuthProblem' };

const RETRY_AFTER = Type.Integer({ minimum: 0, description: 'Seconds to wait before retrying.' });
const WWW_AUTHENTICATE = Type.String({
  description: 'The Bearer challenge (RFC 6750), naming the error and, on 403, the missing scope.',
});

/** Header names as conventionally written, for the document (HTTP header names are case-insensitive). */
const HEADER_SPELLINGS: Record<string, string> = { etag: 'ETag', 'www-authenticate': 'WWW-Authenticate' };

function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return (
    HEADER_SPELLINGS[lower] ??
    lower.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())
  );
}

/** A problem response: the problem, or the problem beside forms of its own (problemResponses' `forms`). */
function isProblemReference(schema: JsonObject): boolean {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf[0] as JsonObject | undefined)?.$ref === PROBLEM_ID;
  return schema.$ref === PROBLEM_ID || schema.$ref === VALIDATION_PROBLEM_ID;
}

/** A 422 is shown in its validation form, beside any other form the route declares for it. */
function unprocessableForm(body: JsonObject): JsonObject {
  if (!Array.isArray(body.anyOf)) return Type.Ref(VALIDATION_PROBLEM_ID);
  return {
    anyOf: (body.anyOf as JsonObject[]).map((form) =>
      form.$ref === PROBLEM_ID ? Type.Ref(VALIDATION_PROBLEM_ID) : form,
    ),
  };
}

function isObjectSchema(schema: unknown): schema is JsonObject & { properties: Record<string, JsonObject> } {
  return typeof schema === 'object' && schema !== null && typeof (schema as JsonObject).properties === 'object';
}

function securityOf(schema: FastifySchema | undefined): JsonObject[] {
  return ((schema as JsonObject | undefined)?.security as JsonObject[] | undefined) ?? [];
}

function requiredScopes(schema: FastifySchema | undefined): string[] {
  return securityOf(schema).flatMap((requirement) => (requirement[SECURITY_SCHEME] as string[] | undefined) ?? []);
}

/** The request headers a route takes, lower-cased. */
function requestHeaders(schema: JsonObject): string[] {
  return isObjectSchema(schema.headers) ? Object.keys(schema.headers.properties).map((name) => name.toLowerCase()) : [];
}

/** The notes an operation gets from the parameters it takes. */
function operationNotes(schema: JsonObject): string[] {
  const notes: string[] = [];
  const scopes = requiredScopes(schema);
  if (scopes.length > 0) notes.push(`**Scope:** \`${scopes.join('`, `')}\`.`);
  const headers = requestHeaders(schema);
  const query = isObjectSchema(schema.querystring) ? Object.keys(schema.querystring.properties) : [];
  if (headers.includes('idempotency-key')) {
    notes.push(
      '**Idempotent create:** with an `Idempotency-Key`, a retry with the same key and the same body within 24 hours replays the original response (status, body and ETag as first sent) with `Idempotent-Replayed: true`. The same key with a different body is 409 `idempotency-conflict`; while the first request is still in progress, 409 `idempotency-pending` with `Retry-After`. Keys are scoped to your client and the resource type; omitting the key removes the protection.',
    );
  }
  if (headers.includes('if-match')) {
    notes.push(
      '**Optimistic concurrency:** send the quoted `ETag` of your last read as `If-Match`; if the resource changed since, the answer is 409 `version-conflict` and nothing changes. Without `If-Match` the update is applied unconditionally.',
    );
  }
  if (query.includes('page[after]')) {
    notes.push(
      `**Pagination:** oldest first; \`page[size]\` 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}). When more records exist, \`meta.nextCursor\` is present: pass it unchanged as \`page[after]\` for the next page. Cursors belong to one list and one client.`,
    );
  } else if (query.includes('page[size]')) {
    notes.push(
      `**Capped list:** only \`page[size]\` (1 to ${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}) applies; there is no cursor and \`meta.nextCursor\` never appears.`,
    );
  }
  return notes;
}

/** Response statuses every route of this shape can answer, whether or not it lists them. */
function impliedStatuses(schema: JsonObject, definition: DocumentDefinition, oauthErrors: boolean): ProblemStatus[] {
  const statuses: ProblemStatus[] = [];
  const body = schema.body as JsonObject | undefined;
  if (body !== undefined) statuses.push(413);
  if (body !== undefined && !oauthErrors) {
    const mediaTypes = body.content ? Object.keys(body.content) : ['application/json'];
    if (mediaTypes.some((mediaType) => !mediaType.startsWith('multipart/'))) statuses.push(400);
    statuses.push(415);
  }
  // A path parameter can be malformed (bad percent-encoding) before it can be unknown.
  if (schema.params !== undefined && !oauthErrors) statuses.push(400, 404);
  // SPEC Idempotent creates rule 5: a replay whose resource is no longer accessible is 404.
  if (requestHeaders(schema).includes('idempotency-key')) statuses.push(404);
  if (!oauthErrors && (body ?? schema.params ?? schema.querystring ?? schema.headers) !== undefined) statuses.push(422);
  const security = securityOf(schema as FastifySchema);
  if (security.some((requirement) => SECURITY_SCHEME in requirement)) statuses.push(401, 403);
  if (security.some((requirement) => ADMIN_SECURITY_SCHEME in requirement)) statuses.push(401);
  if (definition.rateLimited) statuses.push(429);
  // SPEC: 5xx may come from any operation; a 500 is a bare internal-error problem.
  statuses.push(500, 503);
  return [...new Set(statuses)];
}

/** Response headers every response of this status carries on this route: name → required. */
function impliedHeaders(status: string, schema: JsonObject): Record<string, { schema: TSchema; required: boolean }> {
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
  return headers;
}

/** One route's schema as the document shows it (the route's own schema is not changed). */
function describeRoute(
  definition: DocumentDefinition,
  components: ComponentIndex,
  input: RouteTransformInput,
  patches: Map<string, OperationPatch>,
) {
  const { url, route } = input;
  const schema = (input.schema ?? {}) as JsonObject;
  if (schema.hide === true || !url.startsWith(definition.prefix)) return { schema: { ...schema, hide: true }, url };

  const oauthErrors = route.config?.oauthErrors === true;
  const declared = { ...((schema.response as Record<string, JsonObject> | undefined) ?? {}) };
  const implied = impliedStatuses(schema, definition, oauthErrors).filter((status) => !(String(status) in declared));
  const added: Record<string, JsonObject> = oauthErrors
    ? Object.fromEntries(implied.map((status) => [String(status), { description: STATUS_CODES[status] }]))
    : (problemResponses(implied, {
        // The route's body limit (body-limit.ts) when it has one of its own.
        413: bodyTooLargeDetail(route.bodyLimit),
        404: 'Not found, or not owned by your client; on a replay of an Idempotency-Key, the resource it created is no longer accessible.',
      }) as Record<string, JsonObject>);

  const requiredHeaders: Record<string, string[]> = {};
  const response: Record<string, JsonObject> = {};
  for (const [status, original] of Object.entries({ ...declared, ...added })) {
    const { headers, description, ...body } = original;
    const headerSchemas: Record<string, TSchema> = {};
    const required: string[] = [];
    if (isObjectSchema(headers)) {
      const requiredNames = new Set((headers.required as string[] | undefined) ?? []);
      for (const [name, header] of Object.entries(headers.properties)) {
        headerSchemas[name] = header as TSchema;
        if (requiredNames.has(name)) required.push(name);
      }
    }
    for (const [name, header] of Object.entries(impliedHeaders(status, schema))) {
      if (name in headerSchemas) continue;
      headerSchemas[name] = header.schema;
      if (header.required) required.push(name);
    }
    requiredHeaders[status] = required;

    const text = (description as string | undefined) ?? STATUS_CODES[Number(status)] ?? status;
    let shown: JsonObject;
    if (body.type === 'null') {
      shown = { type: 'null', description: text };
    } else if (body.content) {
      shown = { description: text, content: body.content };
    } else if (oauthErrors && Number(status) >= 400) {
      // The error handler answers every error of such a route in the OAuth shape.
      shown = { description: text, content: { 'application/json': { schema: Type.Ref(OAuthProblemComponent.$id) } } };
    } else if (isProblemReference(body)) {
      const problem = status === '422' ? unprocessableForm(body) : body;
      shown = { description: text, content: { 'application/problem+json': { schema: problem } } };
    } else {
      // A named schema may carry a description of its own, which the response's is taken from.
      const named = components.reference(description === undefined ? body : { ...body, description });
      const schema = named.$ref === undefined ? components.reference(body) : named;
      shown = { description: text, content: { 'application/json': { schema } } };
    }
    if (Object.keys(headerSchemas).length > 0) shown.headers = headerSchemas;
    response[status] = shown;
  }

  const notes = operationNotes(schema);
  const text = [schema.description as string | undefined, ...notes].filter(Boolean).join('\n\n');
  const body = documentedBody(namedBody(components, schema.body as JsonObject | undefined));
  const encodings = multipartEncodings(schema.body as JsonObject | undefined);
  const path = formatParamUrl(url);
  for (const method of [route.method].flat()) {
    patches.set(`${method.toLowerCase()} ${path}`, (operation) => {
      for (const [status, names] of Object.entries(requiredHeaders)) {
        const headers = operation.responses?.[status]?.headers as JsonObject | undefined;
        for (const name of names) if (headers?.[name]) headers[name].required = true;
      }
      const multipart = operation.requestBody?.content?.[MULTIPART_FORM_DATA] as JsonObject | undefined;
      if (multipart && encodings) multipart.encoding = encodings;
    });
  }
  return {
    schema: { ...schema, ...(body ? { body } : {}), ...(text ? { description: text } : {}), response } as FastifySchema,
    url,
  };
}

/** A body with its named schemas referenced, per media type when it declares several (media.ts, the token endpoint). */
function namedBody(components: ComponentIndex, body: JsonObject | undefined): JsonObject | undefined {
  if (body === undefined) return undefined;
  if (!body.content) return components.reference(body);
  const content = Object.fromEntries(
    Object.entries(body.content as Record<string, JsonObject>).map(([mediaType, media]) => [
      mediaType,
      { ...media, schema: components.reference(media.schema) },
    ]),
  );
  return { ...body, content };
}

/**
 * A body as the document shows it. A discriminated union (validation.ts) whose branches are inline names
 * each branch's tag with `const`, which the oneOf says by itself; OpenAPI's `discriminator` can only
 * select named (`$ref`) schemas, so it is left out of the document.
 */
function documentedBody(body: JsonObject | undefined): JsonObject | undefined {
  if (
    !body?.discriminator ||
    !Array.isArray(body.oneOf) ||
    body.oneOf.some((branch: JsonObject) => branch.$ref !== undefined)
  )
    return body;
  const { discriminator: _discriminator, ...shown } = body;
  return shown;
}

function multipartEncodings(body: JsonObject | undefined): JsonObject | undefined {
  return body?.content?.[MULTIPART_FORM_DATA]?.encoding as JsonObject | undefined;
}

/** Header parameters and response headers under their conventional spelling. */
function canonicaliseHeaderNames(operation: JsonObject): void {
  for (const parameter of (operation.parameters as JsonObject[] | undefined) ?? []) {
    if (parameter.in === 'header') parameter.name = canonicalHeaderName(parameter.name as string);
  }
  for (const response of Object.values((operation.responses as Record<string, JsonObject> | undefined) ?? {})) {
    if (!response.headers) continue;
    response.headers = Object.fromEntries(
      Object.entries(response.headers as JsonObject).map(([name, header]) => [canonicalHeaderName(name), header]),
    );
  }
}

/**
 * The rate limit's headers (rate-limit.ts), which every answer of a rate-limited document carries, errors
 * and 429 included: declared once under components.headers and referenced from every response.
 */
function declareRateLimitHeaders(document: JsonObject): void {
  document.components.headers = { ...document.components.headers, ...RATE_LIMIT_HEADER_COMPONENTS };
  const references = Object.fromEntries(
    Object.keys(RATE_LIMIT_HEADER_COMPONENTS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );
  for (const item of Object.values(document.paths as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values((operation.responses ?? {}) as Record<string, JsonObject>)) {
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
