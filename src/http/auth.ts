/**
 * Bearer-token protection of client routes. A route declares the scope it needs in its config
 * (`config: { scope: 'sites:read' }`); this plugin then (1) adds the OAuth2 security requirement to
 * the route's schema, so the OpenAPI document states it, and (2) authenticates every request to the
 * route before its body is read: 401 for a missing or bad token, 403 for a missing scope.
 */
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { Problem } from './problem.js';

/** What a verified bearer token grants. */
export interface BearerGrant {
  tenantId: string;
  clientId: string;
  scopes: readonly string[];
}

/** Verifies bearer tokens (the auth module's TokenService). */
export interface BearerTokenVerifier {
  /** The grant of a token verified before and not expired, without waiting; else undefined. */
  verifiedBefore(token: string): BearerGrant | undefined;
  verify(token: string): Promise<BearerGrant | undefined>;
}

/** Whether a client's credentials still stand, and the scopes its tenant holds now. */
export interface ClientStanding {
  active: boolean;
  tenantId: string | undefined;
  tenantScopes: ReadonlySet<string>;
}

/** Looks client standing up (the auth module's CredentialStatus). */
export interface ClientStandingLookup {
  /** The standing checked within the last seconds, without waiting; else undefined. */
  checkedRecently(clientId: string): ClientStanding | undefined;
  lookup(clientId: string): Promise<ClientStanding>;
}

export interface AuthContext {
  tenantId: string;
  clientId: string;
  scopes: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a client route needs (one of the auth module's scopes); routes without it are not client-authenticated. */
    scope?: string;
  }
  interface FastifyRequest {
    /** The authenticated client of a client route (set before the handler runs). */
    auth: AuthContext;
  }
}

export const SECURITY_SCHEME = 'clientCredentials';

const REALM = 'Bearer realm="site-services"';
/** Three base64url parts: the shape of every access token this service issues (a compact JWS). */
const ACCESS_TOKEN_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;
/**
 * Said of a bearer that cannot be an access token at all: a newcomer sends the client_secret itself, or the
 * operator token, and "invalid or expired, fetch a new token" would not tell them there is a token to fetch.
 */
const NOT_AN_ACCESS_TOKEN =
  'The bearer token is not an access token. Get one from POST /api/v1/oauth/token (grant_type=client_credentials ' +
  'with your client_id and client_secret) and send its access_token; the client_secret itself, and the operator ' +
  'token of /admin/v1, are not accepted here.';

function unauthorized(detail: string): Problem {
  return new Problem('unauthorized', detail, { headers: { 'www-authenticate': `${REALM}, error="invalid_token"` } });
}

/** The last `Authorization` header read on a connection, and its token. */
interface ReadHeader {
  header: string;
  token: string | undefined;
}

/**
 * A keep-alive client sends the same header on every request of a connection: the token read from it the
 * last time is used again when the header is the same text. Reading it costs more than the comparison (the
 * pattern scans every character of a token of several hundred), and the token string kept is the one
 * already looked up in the verified tokens' map, where a new string of the same text is hashed and
 * interned again at every request.
 */
const lastReadOnConnection = new WeakMap<object, ReadHeader>();

/** The token of an `Authorization: Bearer` header, or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const connection: object | undefined = request.raw.socket;
  const last = connection && lastReadOnConnection.get(connection);
  if (last?.header === header) return last.token;
  const token = /^Bearer +([^\s]+) *$/i.exec(header)?.[1];
  if (connection) lastReadOnConnection.set(connection, { header, token });
  return token;
}

/** What a grant admits a request as, while its client's standing is the one checked last, and its log bindings. */
interface Admission {
  status: ClientStanding;
  auth: AuthContext;
  bindings: { tenantId: string; clientId: string };
}

/**
 * The requests of one token share their admission until its client's standing is checked again (a new
 * standing object): the scopes are the grant's that the tenant still holds (a scope removed from the tenant
 * stops working for tokens already issued), made once instead of at every request.
 */
const admissions = new WeakMap<BearerGrant, Admission>();

function admission(grant: BearerGrant, status: ClientStanding): Admission {
  const known = admissions.get(grant);
  if (known?.status === status) return known;
  const scopes = new Set(grant.scopes.filter((granted) => status.tenantScopes.has(granted)));
  const made: Admission = {
    status,
    auth: Object.freeze({ tenantId: grant.tenantId, clientId: grant.clientId, scopes }),
    bindings: Object.freeze({ tenantId: grant.tenantId, clientId: grant.clientId }),
  };
  admissions.set(grant, made);
  return made;
}

export function registerClientAuth(
  app: FastifyInstance,
  deps: { tokens: BearerTokenVerifier; credentialStatus: ClientStandingLookup; scopes: readonly string[] },
): void {
  const knownScopes = new Set(deps.scopes);
  /** Admits the request with this grant and status, or says why not. */
  const admit = (
    request: FastifyRequest,
    scope: string,
    grant: BearerGrant,
    status: ClientStanding,
  ): Problem | undefined => {
    if (!status.active || status.tenantId !== grant.tenantId)
      return unauthorized('The credentials of this token have been revoked.');
    const admitted = admission(grant, status);
    request.auth = admitted.auth;
    // The request's own logger gains the bindings (a second child logger per request costs more).
    (request.log as unknown as Logger).setBindings(admitted.bindings);
    if (admitted.auth.scopes.has(scope)) return undefined;
    return new Problem('forbidden', `This operation needs the scope ${scope}; the token does not carry it.`, {
      headers: { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
    });
  };

  const verifyAndAdmit = async (
    request: FastifyRequest,
    scope: string,
    token: string,
  ): Promise<Problem | undefined> => {
    const grant = await deps.tokens.verify(token);
    if (!grant)
      return unauthorized(
        ACCESS_TOKEN_SHAPE.test(token)
          ? 'The bearer token is invalid or expired. Fetch a new token and retry once.'
          : NOT_AN_ACCESS_TOKEN,
      );
    return admit(request, scope, grant, await deps.credentialStatus.lookup(grant.clientId));
  };

  /**
   * The hook of a route needing `scope`. A token this process verified before, of a client whose status
   * it checked within the last seconds, is admitted without waiting (most requests); anything else is
   * verified and looked up first.
   */
  const authenticate =
    (scope: string): onRequestHookHandler =>
    (request, _reply, done) => {
      const token = bearerToken(request);
      if (token === undefined) {
        return done(
          new Problem('unauthorized', 'A bearer token is required: send Authorization: Bearer <access_token>.', {
            headers: { 'www-authenticate': REALM },
          }),
        );
      }
      const grant = deps.tokens.verifiedBefore(token);
      const status = grant && deps.credentialStatus.checkedRecently(grant.clientId);
      if (grant && status) return done(admit(request, scope, grant, status));
      verifyAndAdmit(request, scope, token).then((problem) => done(problem), done);
    };

  app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    if (!scope) return;
    // A misspelt scope would lock everyone out of the route: refused when the app is built.
    if (!knownScopes.has(scope)) throw new Error(`Route ${route.method} ${route.url} names an unknown scope: ${scope}`);
    route.schema = { ...route.schema, security: [{ [SECURITY_SCHEME]: [scope] }] } as typeof route.schema;
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    route.onRequest = [authenticate(scope), ...existing];
  });
}
