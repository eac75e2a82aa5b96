/**
 * buildApp(config, deps) assembles the HTTP application and never listens: server.ts starts it, tests
 * drive it. Cross-cutting concerns are registered first (their hooks must see every route), then the
 * route modules.
 */
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { AppContext } from './app-context.js';
import type { Config } from './config.js';
import type { AppDatabase } from './db/database.js';
import { registerAdminAuth } from './http/admin-auth.js';
import { registerClientAuth } from './http/auth.js';
import { registerErrorHandling } from './http/error-handler.js';
import { registerOperationsRoutes } from './http/operations.js';
import { CursorCodec } from './http/pagination.js';
import { registerRateLimit } from './http/rate-limit.js';
import { ProblemSchema } from './http/schemas.js';
import type { Api } from './http/types.js';
import { validatorCompiler } from './http/validation.js';
import { type Clock, systemClock } from './lib/clock.js';
import { CredentialStatus } from './modules/auth/credential-status.js';
import { registerTokenRoute } from './modules/auth/routes.js';
import { TokenService } from './modules/auth/tokens.js';
import { DatabaseFileStore } from './modules/files/database-store.js';
import { registerReferenceAdminRoutes } from './modules/reference/admin-routes.js';
import { registerReferenceRoutes } from './modules/reference/routes.js';
import { registerSiteAssetAdminRoutes } from './modules/site-assets/admin-routes.js';
import { registerReturnLabelRoutes } from './modules/site-visits/return-label-routes.js';
import { registerSiteVisitRoutes } from './modules/site-visits/routes.js';
import { registerSiteRoutes } from './modules/sites/routes.js';
import { registerTenantAdminRoutes } from './modules/tenants/admin-routes.js';
import type { ServerKeys } from './runtime/server-keys.js';

export interface AppDeps {
  database: AppDatabase;
  keys: ServerKeys;
  logger: Logger;
  clock?: Clock;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const ctx: AppContext = {
    config,
    database: deps.database,
    db: deps.database.db,
    keys: deps.keys,
    clock,
    cursors: new CursorCodec(deps.keys.cursorKey),
    tokens: new TokenService(config, deps.keys, clock),
    credentialStatus: new CredentialStatus(deps.database.db, clock),
    files: new DatabaseFileStore(deps.database, clock),
  };

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
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    bodyLimit: 1024 * 1024,
    routerOptions: { maxParamLength: 200 },
  });
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>() as unknown as Api;

  app.setValidatorCompiler(validatorCompiler);
  app.addSchema(ProblemSchema);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandling(app, config.problemBaseUrl);
  registerRateLimit(app, { limit: config.rateLimitPerMinute, clock });
  registerClientAuth(app, { tokens: ctx.tokens, credentialStatus: ctx.credentialStatus });

  registerOperationsRoutes(app, ctx);
  await registerTokenRoute(app, ctx);
  registerSiteRoutes(app, ctx);
  registerReferenceRoutes(app, ctx);
  registerSiteVisitRoutes(app, ctx);
  await registerReturnLabelRoutes(app, ctx);

  const adminToken = deps.keys.adminToken;
  if (adminToken !== undefined) {
    await app.register(async (operator) => {
      const api = operator as unknown as Api;
      registerAdminAuth(api, adminToken);
      registerTenantAdminRoutes(api, ctx);
      registerReferenceAdminRoutes(api, ctx);
      registerSiteAssetAdminRoutes(api, ctx);
    });
  }

  return fastify as unknown as FastifyInstance;
}
