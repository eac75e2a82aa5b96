/**
 * One route's operation as the documents show it, derived from what the route declares (openapi.ts says
 * what is derived): its implied problem responses and their headers, its notes on idempotency, If-Match
 * and pagination, its named bodies; and the fix-ups @fastify/swagger cannot express, applied to the
 * finished document.
 */
import { STATUS_CODES } from 'node:http';
import { formatParamUrl } from '@fastify/swagger';
import { type TSchema, Type } from 'typebox';
import type { FastifySchema, RouteOptions } from 'fastify';
import type { ComponentIndex } from './components.js';
import { SECURITY_SCHEME } from './auth.js';
import { bodyTooLargeDetail } from './body-limit.js';
import { MULTIPART_FORM_DATA } from './media.js';
import {
  impliedHeaders,
  impliedStatuses,
  isObjectSchema,
  PARSER_STATUSES,
  parserResponses,
  requestHeaders,
  securityOf,
} from './openapi-implied.js';
import type { DocumentDefinition, JsonObject } from './openapi-types.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PAGE_BYTES } from './pagination.js';
import { OAuthProblemSchema, PROBLEM_ID, problemResponses, VALIDATION_PROBLEM_ID } from './schemas.js';

/** Fix-ups of one operation that @fastify/swagger cannot express, applied once the document is built. */
export type OperationPatch = (operation: JsonObject) => void;

export interface RouteTransformInput {
  schema: FastifySchema | undefined;
  url: string;
  route: RouteOptions;
}

/** The token endpoint's error shape, named in the documents. */
export const OAuthProblemComponent = { ...OAuthProblemSchema, $id: 'OAuthProblem' };

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

function requiredScopes(schema: FastifySchema | undefined): string[] {
  return securityOf(schema).flatMap((requirement) => (requirement[SECURITY_SCHEME] as string[] | undefined) ?? []);
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
      `**Pagination:** oldest first; \`page[size]\` 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}). When more records exist, \`meta.nextCursor\` is present: pass it unchanged as \`page[after]\` for the next page. A page holds fewer than \`page[size]\` records, with \`meta.nextCursor\`, when more would make its records' JSON larger than ${PAGE_BYTES / 1024 / 1024} MiB (one record at least): follow the cursor, do not count. Cursors belong to one list and one client.`,
    );
  } else if (query.includes('page[size]')) {
    notes.push(
      `**Capped list:** only \`page[size]\` (1 to ${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}) applies; there is no cursor and \`meta.nextCursor\` never appears.`,
    );
  }
  return notes;
}

/** One route's schema as the document shows it (the route's own schema is not changed). */
export function describeRoute(
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
  const routed = implied.filter((status) => !PARSER_STATUSES.includes(status));
  const added: Record<string, JsonObject> = {
    ...(oauthErrors
      ? Object.fromEntries(routed.map((status) => [String(status), { description: STATUS_CODES[status] }]))
      : (problemResponses(routed, {
          // The route's body limit (body-limit.ts) when it has one of its own.
          413: bodyTooLargeDetail(route.bodyLimit),
          404: 'Not found, or not owned by your client; on a replay of an Idempotency-Key, the resource it created is no longer accessible.',
        }) as Record<string, JsonObject>)),
    ...parserResponses(
      implied.filter((status) => PARSER_STATUSES.includes(status)),
      definition,
      oauthErrors,
    ),
  };

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
    } else if (oauthErrors && Number(status) >= 400 && !isProblemReference(body)) {
      // The error handler answers every error of such a route in the OAuth shape (not what the parser answers).
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
export function canonicaliseHeaderNames(operation: JsonObject): void {
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
