/**
 * The one place where errors become responses. Every error is `application/problem+json` (RFC 9457)
 * except on routes flagged `oauthErrors` (the token endpoint), which answer `application/json` with the
 * problem members plus OAuth's `error` and `error_description` so that OAuth client libraries read them.
 * Unknown errors become a bare 500 and a log line; a 5xx never shows internals.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { isDatabaseTimeout, isTransactionConflict } from '../db/errors.js';
import type { Database } from '../db/schema.js';
import { TenantShareTimeout } from '../db/tenant-shares.js';
import { bodyTooLargeDetail } from './body-limit.js';
import { DuplicateResource } from './duplicate-resource.js';
import { noStoreUnderOperatorPaths } from './headers.js';
import { acceptedMediaTypes } from './media.js';
import { validationProblemFromAjv } from './validation-errors.js';
import { Problem, problemBody } from './problem.js';
import { nameOrWhy } from './request-names.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answer errors in the OAuth token endpoint's format (RFC 6749 §5.2). */
    oauthErrors?: boolean;
  }
}

const OAUTH_ERROR_BY_STATUS: Record<number, string> = {
  400: 'invalid_request',
  401: 'invalid_client',
  415: 'invalid_request',
  429: 'temporarily_unavailable',
  503: 'temporarily_unavailable',
};

/** PostgreSQL and driver conditions that mean "the database is not reachable right now" (timeouts: db/errors.ts). */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
]);

function isDatabaseUnavailable(error: Error & { code?: string }): boolean {
  if (error.code && UNAVAILABLE_CODES.has(error.code)) return true;
  // A slow or stuck database (statement, lock or client timeout) is unavailable for now, not a bug.
  if (isDatabaseTimeout(error)) return true;
  // The last one: Kysely after the database was closed (shutdown in progress).
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|driver has already been destroyed/i.test(
    error.message,
  );
}

/**
 * Maps anything thrown to a Problem; undefined for a genuinely unexpected error. `bodyLimit` is the route's
 * (request.routeOptions.bodyLimit), which a body refused as too large is told; `accepted` the media types its
 * body may have, which a body of another type is told.
 */
export function toProblem(
  error: FastifyError & { code?: string },
  bodyLimit?: number,
  accepted: readonly string[] = ['application/json'],
): Problem | undefined {
  if (error instanceof Problem) return error;
  if (error.validation) {
    const root = error.validationContext === 'body' ? 'body' : (error.validationContext ?? 'request');
    return validationProblemFromAjv(error.validation as never, root);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new Problem(
        'unsupported-media-type',
        `This endpoint does not accept that Content-Type. Send ${accepted.join(' or ')}.`,
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new Problem('payload-too-large', bodyTooLargeDetail(bodyLimit));
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new Problem('malformed-request', 'The body is empty although Content-Type is application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new Problem('malformed-request', 'The request body is not well-formed JSON.');
  }
  if (error instanceof TenantShareTimeout) {
    // Nothing was sent to the database: a retry (with its Idempotency-Key) runs the request as if new.
    const why = error.shareFull
      ? `Your client already has ${error.perTenant} requests working in the database, as many as one client may have at once`
      : `Your client already has ${error.held} requests working in the database, and other clients' requests hold the rest ` +
        'that clients may share';
    return new Problem(
      'service-unavailable',
      `${why}, and this one waited ${error.waitMs / 1000} s for one of them to finish. It changed nothing. ` +
        'Retry it (with its Idempotency-Key, if it had one) once those have been answered.',
      { headers: { 'retry-after': String(Math.ceil(error.waitMs / 1000)) } },
    );
  }
  if (isTransactionConflict(error)) {
    return new Problem(
      'service-unavailable',
      'The request conflicted with a concurrent one and changed nothing. Retry it (with its Idempotency-Key, if it had one).',
      { headers: { 'retry-after': '1' } },
    );
  }
  if (isDatabaseUnavailable(error)) {
    return new Problem('service-unavailable', 'The service is temporarily unavailable. Retry with backoff.', {
      headers: { 'retry-after': '5' },
    });
  }
  const status = error.statusCode;
  if (status === 400) return new Problem('malformed-request', 'The request could not be parsed.');
  if (status === 413) return new Problem('payload-too-large', 'The request body is too large.');
  if (status === 415) return new Problem('unsupported-media-type', 'Unsupported Content-Type.');
  return undefined;
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem, problemBaseUrl: string) {
  const body = problemBody(problem, problemBaseUrl);
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  if (request.routeOptions.config?.oauthErrors) {
    body.error =
      problem.extensions.error ??
      OAUTH_ERROR_BY_STATUS[problem.status] ??
      (problem.status >= 500 ? 'server_error' : 'invalid_request');
    body.error_description = problem.extensions.error_description ?? problem.detail;
    reply.header('cache-control', 'no-store');
    return reply.code(problem.status).type('application/json; charset=utf-8').send(body);
  }
  return reply.code(problem.status).type('application/problem+json; charset=utf-8').send(body);
}

/**
 * Fastify's `frameworkErrors` option: what the router refuses before any route or hook runs (a path
 * that is not valid percent-encoding, a path parameter beyond `maxParamLength`) is a problem too, and
 * counted by the rate limit like any other request (whose refusal comes first).
 */
export function frameworkErrorHandler(
  problemBaseUrl: string,
  rateLimit?: { checkRouterRefusal(request: FastifyRequest, reply: FastifyReply): Problem | undefined },
) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // No hooks run for these requests, so the request id (and the operator's no-store) is set here.
    reply.header('x-request-id', request.id);
    noStoreUnderOperatorPaths(request, reply);
    const refusal = rateLimit?.checkRouterRefusal(request, reply);
    if (refusal) return sendProblem(request, reply, refusal, problemBaseUrl);
    const problem =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new Problem('not-found', 'No resource lives at this path.')
        : error.code === 'FST_ERR_BAD_URL'
          ? new Problem('malformed-request', 'The request path is not a valid URL.')
          : (toProblem(error) ?? new Problem('internal-error', 'The service failed unexpectedly.'));
    return sendProblem(request, reply, problem, problemBaseUrl);
  };
}

/**
 * Fastify's `clientErrorHandler` option: what Node's HTTP parser refuses before Fastify sees a request
 * (headers over 16 KiB, a request not received within the request timeout, bytes that are not HTTP)
 * is answered as a problem too, instead of Fastify's default JSON, and the connection is closed.
 */
export function clientErrorHandler(problemBaseUrl: string) {
  return (error: Error & { code?: string }, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const problem =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new Problem('headers-too-large', 'The request headers are larger than 16 KiB.')
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new Problem('request-timeout', 'The request was not received completely in time.')
          : new Problem('malformed-request', 'The request is not well-formed HTTP.');
    const body = JSON.stringify(problemBody(problem, problemBaseUrl));
    // A response already under way (a route answered before the body arrived) gets no second one.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy(error);
      return;
    }
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}

/** The path with its percent-encoding decoded where it stands for characters other than separators. */
function decodedPath(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/**
 * `db` is where a duplicate-resource problem looks up the resource it names (http/duplicate-resource.ts),
 * after the request's own statements.
 */
export function registerErrorHandling(
  app: FastifyInstance,
  problemBaseUrl: string,
  db: Kysely<Database>,
  rateLimit?: { checkRefusal(request: FastifyRequest, reply: FastifyReply): Problem | undefined },
): void {
  // Routes by pattern, to tell "no such path" (404) from "no such method on this path" (405).
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    // A parameter may be empty, as the router lets it be at a path's end (`/api/v1/sites/` is the site route).
    const source = route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\?:[A-Za-z_][\w-]*/g, '[^/]*');
    // Exact, like the router: `/health/` is not `/health` (ignoreTrailingSlash is off).
    const pattern = new RegExp(`^${source}$`);
    let entry = routes.find((candidate) => candidate.pattern.source === pattern.source);
    if (!entry) {
      entry = { pattern, methods: new Set() };
      routes.push(entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A route that does not count its requests still counts its refusals (rate-limit.ts).
    const problem =
      rateLimit?.checkRefusal(request, reply) ??
      toProblem(
        error,
        request.routeOptions.bodyLimit,
        acceptedMediaTypes((request.routeOptions.schema as { body?: unknown } | undefined)?.body),
      );
    if (problem instanceof DuplicateResource) {
      // Answered whatever the lookup does: without the existing resource when it cannot be read.
      return problem
        .naming(db)
        .catch((lookupError: unknown) => {
          request.log.warn({ err: lookupError }, 'the existing resource of a duplicate could not be read');
          return problem;
        })
        .then((named) => sendProblem(request, reply, named, problemBaseUrl));
    }
    if (problem) {
      if (problem.status >= 500) request.log.warn({ err: error }, 'request failed: %s', problem.slug);
      return sendProblem(request, reply, problem, problemBaseUrl);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      request,
      reply,
      new Problem('internal-error', 'The service failed unexpectedly.'),
      problemBaseUrl,
    );
  });

  app.setNotFoundHandler((request, reply) => {
    noStoreUnderOperatorPaths(request, reply);
    const path = request.url.split('?')[0]!;
    // Matched as the router matches it, percent-encoding decoded (`/api/v1/%73ites` is the sites route); decodeURI
    // keeps an encoded `/` as it is, as the router does.
    const allowed = routes.find((route) => route.pattern.test(decodedPath(path)))?.methods;
    if (allowed && allowed.size > 0 && !allowed.has(request.method)) {
      const allow = [...allowed].sort().join(', ');
      reply.header('allow', allow);
      return sendProblem(
        request,
        reply,
        new Problem('method-not-allowed', `${request.method} is not supported on this path. Allowed: ${allow}.`),
        problemBaseUrl,
      );
    }
    // Outside the APIs (the root a browser opens first, a mistyped version): where they and their reference are.
    const where = /^\/(api|admin)\/v1\//.test(path) ? '' : ' The API is under /api/v1/; its reference is at /docs.';
    return sendProblem(
      request,
      reply,
      new Problem('not-found', `No resource lives at ${nameOrWhy(path, 'a path')}.${where}`),
      problemBaseUrl,
    );
  });
}
