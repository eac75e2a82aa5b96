/**
 * buildApp(config, deps) assembles the HTTP application and never listens: server.ts starts it, tests
 * drive it. Cross-cutting concerns are registered first (their hooks must see every route), then the
 * route modules.
 */
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { AppContext } from './app-context.js';
import type { Config } from './config.js';
import type { AppDatabase } from './db/database.js';
import { registerAdminAuth } from './http/admin-auth.js';
import { registerSchemaBodyLimits, SERVICE_BODY_LIMIT } from './http/body-limit.js';
import { registerResponseDeadline } from './http/response-deadline.js';
import { registerClientAuth } from './http/auth.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/error-handler.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerContentEncodingRefusal } from './http/media.js';
import { registerHeaderLineRefusal } from './http/header-lines.js';
import { registerOperationsRoutes } from './http/operations.js';
import { registerOpenApi, registerOperatorOpenApiRoute } from './http/openapi.js';
import { RenderedResources } from './http/rendered-resources.js';
import { CursorCodec } from './http/pagination.js';
import { parseQueryString } from './http/query-string.js';
import { registerMetricsRoute, registerRequestMetrics } from './http/metrics.js';
import { registerNoStore } from './http/headers.js';
import { ClientRateLimit, sweepUntilClose } from './http/rate-limit.js';
import { SlidingWindowLimiter } from './http/sliding-window.js';
import { ProblemSchema } from './http/schemas.js';
import { registerShutdownRefusal } from './http/shutdown.js';
import { registerLingeringClose } from './http/lingering-close.js';
import type { Api } from './http/types.js';
import { lazySerializerFactory } from './http/lazy-compilers.js';
import { validatorCompiler } from './http/validation.js';
import { type Clock, systemClock } from './lib/clock.js';
import { lazyChildLogger } from './lib/lazy-logger.js';
import { registerConnectionCap } from './http/connection-cap.js';
import { deferContinue } from './http/expect-continue.js';
import { CredentialStatus } from './modules/auth/credential-status.js';
import { registerTokenRoute } from './modules/auth/routes.js';
import { ALL_SCOPES } from './modules/auth/scopes.js';
import { TokenService } from './modules/auth/tokens.js';
import { openApiDefinitions } from './modules/docs/definitions.js';
import { registerConsoleRoutes } from './modules/console/routes.js';
import { registerDocsRoutes } from './modules/docs/routes.js';
import { DatabaseFileStore } from './modules/files/database-store.js';
import { registerMessageAdminRoutes } from './modules/messages/admin-routes.js';
import { registerFileAttachmentRoutes } from './modules/messages/file-attachment-routes.js';
import { registerMessageRoutes } from './modules/messages/routes.js';
import { registerReferenceAdminRoutes } from './modules/reference/admin-routes.js';
import { registerReferenceRoutes } from './modules/reference/routes.js';
import { registerSiteAssetAdminRoutes } from './modules/site-assets/admin-routes.js';
import { registerSiteVisitAdminRoutes } from './modules/site-visits/admin-routes.js';
import { registerSandboxRoutes } from './modules/site-visits/sandbox-routes.js';
import { registerReturnLabelRoutes } from './modules/site-visits/return-label-routes.js';
import { registerSiteVisitRoutes } from './modules/site-visits/routes.js';
import { registerSiteRoutes } from './modules/sites/routes.js';
import { siteCodeFollower } from './modules/site-visits/service.js';
import { registerTenantAdminRoutes } from './modules/tenants/admin-routes.js';
import { registerWebhookAdminRoutes } from './modules/webhook-subscriptions/admin-routes.js';
import { registerDeliveryAdminRoutes } from './modules/outbox/admin-routes.js';
import { DestinationPolicy } from './modules/outbox/destination-policy.js';
import type { Resolver } from './modules/outbox/resolvers.js';
import { logWakeFailuresTo } from './modules/outbox/wake-workers.js';
import { registerListenerRoutes } from './modules/webhook-listeners/routes.js';
import { registerWebhookRoutes } from './modules/webhook-subscriptions/routes.js';
import { Metrics } from './runtime/metrics.js';
import type { ServerKeys } from './runtime/server-keys.js';

export interface AppDeps {
  database: AppDatabase;
  keys: ServerKeys;
  logger: Logger;
  clock?: Clock;
  /** Resolves every name for the webhook destination policy (tests); default: resolvers.ts's split. */
  resolver?: Resolver;
  /** The process's metrics (shared with its delivery worker); default: a registry of the app's own. */
  metrics?: Metrics;
  /** How long a refused upload's connection lingers after its answer (tests); default LINGER_MS. */
  lingerMs?: number;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

type ValidatorFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
>;
/** Every context's validator factory: `validatorCompiler` (Fastify's types name Ajv's own compiler there). */
const validatorFactory = (() => validatorCompiler) as unknown as ValidatorFactory;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const metrics = deps.metrics ?? new Metrics({ database: deps.database, clock });
  const ctx: AppContext = {
    config,
    database: deps.database,
    db: deps.database.db,
    keys: deps.keys,
    clock,
    cursors: new CursorCodec(deps.keys.cursorKey),
    rendered: new RenderedResources(config.listCacheBytes),
    tokens: new TokenService(config, deps.keys, clock),
    credentialStatus: new CredentialStatus(deps.database.db, clock),
    destinations: new DestinationPolicy({
      resolver: deps.resolver,
      testAllowedDestinations: config.webhook.testAllowedDestinations,
    }),
    files: new DatabaseFileStore(deps.database, clock),
  };
  // The routes' commits wake the delivery workers on this handle; a wake that fails is the app's to log.
  logWakeFailuresTo(ctx.db, deps.logger.child({ component: 'wake-workers' }));

  // Before Fastify: the router's own refusals (frameworkErrors) are counted and refused like any request.
  const rateLimit = new ClientRateLimit({
    limit: config.rateLimitPerMinute,
    clock,
    trustProxy: config.trustProxy,
    onRefused: () => metrics.rateLimitRefusals.inc(),
  });
  const fastify = Fastify({
    loggerInstance: deps.logger,
    // Fastify accepts a hop count too, though its types do not say so.
    trustProxy: config.trustProxy as boolean | string | string[],
    // Reuse a caller's request id when it is sane, so one id follows a request across systems.
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    childLoggerFactory: lazyChildLogger as unknown as FastifyServerOptions['childLoggerFactory'],
    forceCloseConnections: 'idle',
    // Requests arriving while closing get a 503 problem from registerShutdownRefusal instead.
    return503OnClosing: false,
    // Every context's validators are ours (validation.ts), given here rather than by setValidatorCompiler:
    // a plugin context that adds a schema rebuilds its validator from these options, and with only the
    // setter it built Fastify's default Ajv (its meta-schema compiled at every start, and the listener
    // stream's path read without our checks: U+0000 reached the database, a 500). Response serialisers are
    // compiled on a route's first response, not while starting (lazy-compilers.ts).
    schemaController: {
      compilersFactory: { buildValidator: validatorFactory, buildSerializer: lazySerializerFactory },
    },
    bodyLimit: SERVICE_BODY_LIMIT,
    // A query component that is not UTF-8 is refused naming the parameter, not read as other text (query-string.ts).
    routerOptions: { maxParamLength: 200, querystringParser: parseQueryString },
    frameworkErrors: frameworkErrorHandler(config.problemBaseUrl, rateLimit) as FastifyServerOptions['frameworkErrors'],
    clientErrorHandler: clientErrorHandler(config.problemBaseUrl),
    // Fastify's default is no limit at all: a client trickling a body would hold its connection (and an
    // upload's stream) forever. Node enforces the limit only when the server is constructed with it (Fastify
    // sets it afterwards, so it goes in both places), checking every connectionsCheckingInterval.
    requestTimeout: config.requestTimeoutMs,
    http: {
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, config.requestTimeoutMs / 2),
    },
  });
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>() as unknown as Api;
  registerConnectionCap(app, {
    max: config.connectionsPerAddress,
    trustProxy: config.trustProxy,
    logger: deps.logger,
  });
  // A request that asks `Expect: 100-continue` is checked before it is invited to send its body.
  deferContinue(fastify.server);

  // Only JSON (and, on the token endpoint, form) bodies are read: anything else is 415 (DECISIONS),
  // including text/plain, which Fastify would otherwise accept as a string.
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  app.addSchema(ProblemSchema);
  // On the raw response, which Node merges into whatever Fastify writes (errors included), so no onSend
  // hook has to run for every response.
  app.addHook('onRequest', (request, reply, done) => {
    reply.raw.setHeader('x-request-id', request.id);
    done();
  });
  registerErrorHandling(app, config.problemBaseUrl, ctx.db, rateLimit);
  // First of the hooks that can refuse: every answer under /api/v1 is counted and carries the limit's headers.
  rateLimit.register(app);
  registerShutdownRefusal(app);
  registerLingeringClose(app, deps.lingerMs);
  registerResponseDeadline(app, config.responseTimeoutMs);
  registerHeaderLineRefusal(app);
  registerContentEncodingRefusal(app);
  registerRequestMetrics(app, metrics);
  registerClientAuth(app, { tokens: ctx.tokens, credentialStatus: ctx.credentialStatus, scopes: ALL_SCOPES });
  // Before the routes, which it applies to: a JSON route accepts no body longer than its schema admits.
  registerSchemaBodyLimits(app);
  // Before the routes: the documents are built from the routes registered after this point.
  await registerOpenApi(app, config, openApiDefinitions(config));

  registerOperationsRoutes(app, ctx);
  registerDocsRoutes(app, config);
  await registerTokenRoute(app, ctx);
  // A visit shows its site's code: a new code is a new version of each visit of the site, so many a minute.
  const siteCodeRewrites = new SlidingWindowLimiter(config.siteCodeVisitRewritesPerMinute);
  sweepUntilClose(app, siteCodeRewrites, clock);
  registerSiteRoutes(app, ctx, [siteCodeFollower(siteCodeRewrites, clock)]);
  registerWebhookRoutes(app, ctx);
  registerReferenceRoutes(app, ctx);
  registerSiteVisitRoutes(app, ctx);
  registerSandboxRoutes(app, ctx);
  await registerListenerRoutes(app, ctx);
  await registerReturnLabelRoutes(app, ctx);
  registerMessageRoutes(app, ctx);
  await registerFileAttachmentRoutes(app, ctx);

  const adminToken = deps.keys.adminToken;
  if (adminToken !== undefined) {
    registerConsoleRoutes(app);
    await app.register(async (operator) => {
      const api = operator as unknown as Api;
      // First: every operator answer, the token's refusals included, is sent with Cache-Control: no-store.
      registerNoStore(api);
      registerAdminAuth(api, { adminToken, failuresPerMinute: config.adminAuthFailuresPerMinute, clock });
      registerOperatorOpenApiRoute(api);
      registerMetricsRoute(api, metrics);
      registerTenantAdminRoutes(api, ctx);
      registerReferenceAdminRoutes(api, ctx);
      registerSiteAssetAdminRoutes(api, ctx);
      registerSiteVisitAdminRoutes(api, ctx);
      registerMessageAdminRoutes(api, ctx);
      registerWebhookAdminRoutes(api, ctx);
      registerDeliveryAdminRoutes(api, ctx);
    });
  }

  return fastify as unknown as FastifyInstance;
}
