/**
 * SPEC Limits: N requests per minute per observed client address, counted in each process (not shared
 * between processes), in a sliding window (sliding-window.ts): request N+1 within any 60 seconds from one
 * address is refused with 429 and a Retry-After telling when the oldest counted request leaves the window.
 *
 * Counts every request under /api/v1, the token endpoint and unknown paths included (DECISIONS); not
 * /health, /ready, /docs, /console or the operator API. What counts is decided on what the router routes,
 * never on the raw request target: the matched route's template, or, when no route matched (404, 405, a
 * malformed path), the target read the way a router might (normalisedPath). `/%61pi/v1/sites` and the
 * absolute form `http://any/api/v1/sites` reach the sites route, so they count like `/api/v1/sites`.
 *
 * Every counted response, 429 included, says where the client stands: `x-ratelimit-limit`,
 * `x-ratelimit-remaining` and `x-ratelimit-reset` (seconds until the oldest counted request leaves the
 * window, when remaining grows). Hand-written rather than @fastify/rate-limit: docs/decisions.md.
 */
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TrustProxy } from '../config.js';
import type { Clock } from '../lib/clock.js';
import { addressBudget } from './address-budget.js';
import { Problem } from './problem.js';
import { SlidingWindowLimiter } from './sliding-window.js';

const SWEEP_INTERVAL_MS = 60_000;
const PREFIX = '/api/v1';

/** The response headers of the rate limit, as sent (lower case). */
export const RATE_LIMIT_HEADERS = {
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  reset: 'x-ratelimit-reset',
} as const;

/** The headers as the OpenAPI document declares them (components.headers, referenced from every response). */
export const RATE_LIMIT_HEADER_COMPONENTS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed in any one minute from your address (counted in each API process).',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
  'X-RateLimit-Remaining': {
    description:
      'Requests you may still make now. At 0, wait X-RateLimit-Reset seconds before the next request (a 429 answers it otherwise).',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description:
      'Seconds until the oldest request counted in the sliding one-minute window leaves it, when X-RateLimit-Remaining grows again; equal to Retry-After on a 429.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
} as const;

/** Whether a path (a route template or a normalised target) is under the client API. */
export function isClientApiPath(path: string): boolean {
  return path.startsWith(PREFIX) && (path.length === PREFIX.length || path[PREFIX.length] === '/');
}

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * A request target as a path that a router might have meant: the absolute form's scheme and authority
 * dropped, query and fragment cut, every %XX decoded once (also %2F, which the router keeps: counting a
 * few more 404s costs honest clients nothing), backslashes read as slashes, doubled slashes collapsed, dot
 * segments resolved, and lower-cased (a router that ignored case would route `/API/v1/…`). Only asked when
 * no route matched, so it is off the path of ordinary requests.
 */
export function normalisedPath(target: string): string {
  let path = target;
  if (!path.startsWith('/')) path = path.replace(ABSOLUTE_FORM, '');
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  // Byte by byte: only the ASCII prefix matters, and a malformed sequence must not throw.
  path = path.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  const segments: string[] = [];
  for (const segment of path.replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`.toLowerCase();
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false: the route's requests are counted in a window of their own, not the address's requests' (a
     * long-lived stream that is one connection, not requests: the sandbox's webhook listener stream, whose
     * reports must never be starved into timeouts by the address's other calls). Its openings have the same
     * limit a minute (hostile-tenant probe: uncounted, one address opened and dropped streams 50 times a
     * second, each a handful of statements). Those it refuses are also counted as requests, and refused 429
     * past the limit (`checkRefusal`).
     */
    rateLimit?: false;
  }
}

/** Whether a request is counted as one: by the route the router matched, else by its normalised target. */
function isCounted(request: FastifyRequest): boolean {
  // No url for the not-found handler and for a request the router refused (frameworkErrors).
  const route = request.routeOptions.url;
  return isClientApiPath(route ?? normalisedPath(request.url));
}

/**
 * The client address of a request the router refused (frameworkErrors): Fastify builds that request
 * without its trustProxy setting, so its `ip` is always the peer's. Worked out here the way Fastify does
 * for every other request (fastify/lib/request.js, with the same proxy-addr), or the same peer would
 * count against a proxy's address.
 */
export function routerRefusalAddress(trustProxy: TrustProxy): (request: FastifyRequest) => string {
  // A hop count: Fastify trusts no forwarded address (it cannot validate the immediate peer).
  if (trustProxy === false || typeof trustProxy === 'number') return (request) => request.ip;
  const trust = trustProxy === true ? () => true : proxyAddr.compile([...trustProxy]);
  return (request) => {
    const addresses = proxyAddr.all(request.raw, trust);
    return addresses[addresses.length - 1] ?? request.ip;
  };
}

/** The 429 of a per-address limit: what the address sent past it in one minute, and when to come back. */
export function overLimit(counted: string, waitSeconds: number): Problem {
  return new Problem(
    'rate-limit-exceeded',
    `More than ${counted} in one minute from your address. Retry after ${waitSeconds} seconds.`,
    { headers: { 'retry-after': String(waitSeconds) } },
  );
}

/** Forgets the limiter's idle addresses every minute until the app closes, so memory follows active clients. */
export function sweepUntilClose(app: FastifyInstance, limiter: SlidingWindowLimiter, clock: Clock): void {
  const sweeper = setInterval(() => limiter.sweep(clock.now().getTime()), SWEEP_INTERVAL_MS);
  sweeper.unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
}

export interface RateLimitOptions {
  limit: number;
  clock: Clock;
  trustProxy: TrustProxy;
  /** Called for each refusal (the refusal metric). */
  onRefused?: () => void;
}

/** The client API's rate limit: one per app, registered as the first onRequest hook that can refuse. */
export class ClientRateLimit {
  private readonly limiter: SlidingWindowLimiter;
  /** Openings of the routes not counted as requests (`rateLimit: false`), per address. */
  private readonly openings: SlidingWindowLimiter;
  private readonly limitText: string;
  private readonly refusalAddress: (request: FastifyRequest) => string;

  constructor(private readonly options: RateLimitOptions) {
    this.limiter = new SlidingWindowLimiter(options.limit);
    this.openings = new SlidingWindowLimiter(options.limit);
    this.limitText = String(options.limit);
    this.refusalAddress = routerRefusalAddress(options.trustProxy);
  }

  /**
   * Counts the request when it is under /api/v1 and sets the rate-limit headers on the raw response (Node
   * merges them into whatever is sent, errors included). Returns the refusal when it is over the limit.
   */
  check(request: FastifyRequest, reply: FastifyReply, address = request.ip): Problem | undefined {
    // A plain request of such a route is refused (426) and counted then, by checkRefusal.
    if (request.routeOptions.config?.rateLimit === false)
      return request.headers.upgrade === undefined ? undefined : this.takeOpening(address);
    if (!isCounted(request)) return undefined;
    return this.take(reply, address);
  }

  /** Counts an opening of a stream in its own window, without the requests' headers; the refusal past the limit. */
  private takeOpening(address: string): Problem | undefined {
    const decision = this.openings.take(addressBudget(address), this.options.clock.now().getTime());
    if (decision.allowed) return undefined;
    this.options.onRefused?.();
    return overLimit(`${this.options.limit} stream openings`, decision.resetSeconds);
  }

  /** Counts one request of the address, with the limit's headers; the refusal when it is over the limit. */
  private take(reply: FastifyReply, address: string): Problem | undefined {
    const decision = this.limiter.take(addressBudget(address), this.options.clock.now().getTime());
    const raw = reply.raw;
    raw.setHeader(RATE_LIMIT_HEADERS.limit, this.limitText);
    raw.setHeader(RATE_LIMIT_HEADERS.remaining, String(decision.remaining));
    raw.setHeader(RATE_LIMIT_HEADERS.reset, String(decision.resetSeconds));
    if (decision.allowed) return undefined;
    this.options.onRefused?.();
    return overLimit(`${this.options.limit} requests`, decision.resetSeconds);
  }

  /**
   * A refusal (any problem) about to be answered on a route whose requests are not counted (`rateLimit:
   * false`): counted now, and the rate limit's own refusal instead when the address is over its limit.
   */
  checkRefusal(request: FastifyRequest, reply: FastifyReply): Problem | undefined {
    if (request.routeOptions.config?.rateLimit !== false) return undefined;
    return this.take(reply, request.ip);
  }

  /** `check` for a request the router refused (frameworkErrors), whose `ip` ignores trustProxy. */
  checkRouterRefusal(request: FastifyRequest, reply: FastifyReply): Problem | undefined {
    return this.check(request, reply, this.refusalAddress(request));
  }

  /** The onRequest hook (routes and the not-found handler) and the sweep of idle addresses. */
  register(app: FastifyInstance): void {
    sweepUntilClose(app, this.limiter, this.options.clock);
    sweepUntilClose(app, this.openings, this.options.clock);
    // Callback style: no promise per request.
    app.addHook('onRequest', (request, reply, done) => {
      const refusal = this.check(request, reply);
      if (refusal) done(refusal);
      else done();
    });
  }
}
