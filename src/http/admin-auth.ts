/**
 * The operator API's authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time.
 * Registered inside the operator API's plugin, so it covers exactly those routes (and the console, which
 * calls them).
 *
 * ADMIN_TOKEN is chosen by the operator and may be as short as 16 characters, so wrong tokens are counted per
 * client address (a request with no Bearer token guesses nothing and is not counted): past
 * ADMIN_AUTH_FAILURES_PER_MINUTE in any one minute, every operator request from that
 * address is refused with 429 until the oldest wrong one is a minute old. Refused before the comparison, so
 * that a guess made while refused learns nothing, the right token included (docs/decisions.md).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { constantTimeEqual } from '../lib/secrets.js';
import { addressBudget } from './address-budget.js';
import { bearerToken } from './auth.js';
import { Problem } from './problem.js';
import { overLimit, sweepUntilClose } from './rate-limit.js';
import { SlidingWindowLimiter } from './sliding-window.js';

export const ADMIN_SECURITY_SCHEME = 'operatorToken';

export interface AdminAuthOptions {
  adminToken: string;
  /** Wrong tokens one client address may send in any one minute (ADMIN_AUTH_FAILURES_PER_MINUTE). */
  failuresPerMinute: number;
  clock: Clock;
}

export function registerAdminAuth(
  app: FastifyInstance,
  { adminToken, failuresPerMinute, clock }: AdminAuthOptions,
): void {
  const failures = new SlidingWindowLimiter(failuresPerMinute);
  sweepUntilClose(app, failures, clock);

  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security: [{ [ADMIN_SECURITY_SCHEME]: [] }] } as typeof route.schema;
  });
  app.addHook('onRequest', async (request) => {
    const now = clock.now().getTime();
    const budget = addressBudget(request.ip);
    const standing = failures.peek(budget, now);
    if (!standing.allowed) throw overLimit(`${failuresPerMinute} wrong operator tokens`, standing.resetSeconds);
    const token = bearerToken(request);
    if (token === undefined || !constantTimeEqual(token, adminToken)) {
      if (token !== undefined && failures.take(budget, now).remaining === 0)
        request.log.warn(
          { address: request.ip },
          'operator API: too many wrong tokens from one address; its requests are refused for a minute',
        );
      throw new Problem('unauthorized', 'The operator API needs Authorization: Bearer <ADMIN_TOKEN>.', {
        headers: { 'www-authenticate': 'Bearer realm="site-services-operator"' },
      });
    }
    // The tenant an operator request is about joins its log lines, as a client's tenant does.
    const tenantId = (request.params as { tenantId?: unknown } | undefined)?.tenantId;
    if (typeof tenantId === 'string') (request.log as unknown as Logger).setBindings({ tenantId });
  });
}
