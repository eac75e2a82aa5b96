/**
 * POST /api/v1/sandbox/site-visits/{id}/simulate: registered only when ENVIRONMENT=sandbox (production
 * answers the usual 404 problem), protected, tenant-scoped and rate-limited like every client route.
 */
import type { AppContext } from '../../app-context.js';
import { transaction } from '../../db/transaction.js';
import { isoTime } from '../../http/envelope.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { loadVisitViews, toVisitResource } from './representation.js';
import { SimulateBody, SimulateResponse } from './workflow-schemas.js';
import { SIMULATED_REP, simulate } from './simulator.js';

export const SANDBOX_TAG = 'Sandbox';

export function registerSandboxRoutes(app: Api, ctx: AppContext): void {
  if (ctx.config.environment !== 'sandbox') return;
  const { db, clock } = ctx;
  const baseUrl = ctx.config.publicBaseUrl;

  app.post(
    '/api/v1/sandbox/site-visits/:id/simulate',
    {
      config: { scope: 'site-visits:write' },
      schema: {
        operationId: 'simulateSiteVisitLifecycle',
        summary: 'Simulate the operator moving one of your site visits on (sandbox only)',
        description: [
          'Sandbox only: this path does not exist in production. It lets you test your webhook receiver end to end without the operator.',
          '',
          'The body is one operator workflow action (`assign-rep`, `schedule`, `dispatch`, `complete`, `transmit-deliverables`: the same shapes and rules as the operator\'s workflow), or `{"action": "complete-lifecycle"}`, which walks a New visit through rep assignment ("' +
            SIMULATED_REP +
            '"), scheduling (tomorrow 09:00), a schedule change (the day after, 13:30), dispatch, completion and deliverables.',
          '',
          'Each change records its real lifecycle event, which is signed and delivered to your matching subscriptions like any other (while your client has webhook access). `meta.events` lists the events recorded, so you can match them with what your receiver gets. An action that changes nothing records nothing.',
        ].join('\n'),
        tags: [SANDBOX_TAG],
        params: IdParams,
        body: SimulateBody,
        response: {
          200: SimulateResponse,
          ...problemResponses(
            [401, 403, 404, 409, 422, 429],
            { 409: "The visit's status does not allow the action (invalid-state)." },
            {},
            { 409: ['invalid-state'] },
          ),
        },
      },
    },
    async (request) => {
      const { tenantId } = request.auth;
      return transaction(db, tenantId, async (tx) => {
        // Validated against SimulateBody; the type provider cannot infer a discriminated oneOf.
        const outcome = await simulate(
          tx,
          tenantId,
          request.params.id,
          request.body as never,
          clock.now(),
          request.log,
        );
        const [view] = await loadVisitViews(tx, tenantId, [outcome.visit], request.auth.scopes.has('site-visits:read'));
        return {
          data: toVisitResource(view!, baseUrl),
          meta: {
            events: outcome.events.map((event) => ({
              id: event.id,
              type: event.type,
              occurredAt: isoTime(event.occurred_at),
            })),
          },
        };
      });
    },
  );
}
