/**
 * The operator API's authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time.
 * Registered inside the operator API's plugin, so it covers exactly those routes.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { constantTimeEqual } from '../lib/secrets.js';
import { bearerToken } from './auth.js';
import { Problem } from './problem.js';

export const ADMIN_SECURITY_SCHEME = 'operatorToken';

export function registerAdminAuth(app: FastifyInstance, adminToken: string): void {
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security: [{ [ADMIN_SECURITY_SCHEME]: [] }] } as typeof route.schema;
  });
  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request);
    if (token === undefined || !constantTimeEqual(token, adminToken)) {
      throw new Problem('unauthorized', 'The operator API needs Authorization: Bearer <ADMIN_TOKEN>.', {
        headers: { 'www-authenticate': 'Bearer realm="site-services-operator"' },
      });
    }
    // The tenant an operator request is about joins its log lines, as a client's tenant does.
    const tenantId = (request.params as { tenantId?: unknown } | undefined)?.tenantId;
    if (typeof tenantId === 'string') (request.log as unknown as Logger).setBindings({ tenantId });
  });
}
