/** Operator API: legacy subscriptions and the subscriptions' delivery health. */
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { DataOf as data, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { TenantParams } from '../tenants/schemas.js';
import { AdminSubscriptionCreateBody, Subscription, SubscriptionWithHealth } from './schemas.js';
import * as webhooks from './service.js';

const tags = ['Webhooks'];

export function registerWebhookAdminRoutes(app: Api, ctx: AppContext): void {
  const { db, clock } = ctx;

  app.post(
    '/admin/v1/tenants/:tenantId/webhook-subscriptions',
    {
      schema: {
        operationId: 'createLegacyWebhookSubscription',
        summary: 'Create a legacy webhook subscription',
        description:
          'For subscriptions carried over from before v1: signed with the server-held legacy key until the client upgrades it. The destination rules apply.',
        tags,
        params: TenantParams,
        body: AdminSubscriptionCreateBody,
        response: { 201: data(Subscription), ...problemResponses([401, 404, 422, 503]) },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await webhooks.createLegacySubscription(
          { db, destinations: ctx.destinations },
          request.params.tenantId,
          request.body,
          clock.now(),
        ),
      }),
  );

  app.get(
    '/admin/v1/tenants/:tenantId/webhook-subscriptions',
    {
      schema: {
        operationId: 'listTenantWebhookSubscriptions',
        summary: "List a tenant's webhook subscriptions with their delivery health",
        description:
          'Each subscription of the tenant, legacy and v1, with its delivery health: consecutive failures, last success and failure, and the outcome of its deliveries of the last 24 hours.',
        tags,
        params: TenantParams,
        querystring: NoQuery,
        response: { 200: data(Type.Array(SubscriptionWithHealth)), ...problemResponses([401, 404]) },
      },
    },
    async (request) => ({ data: await webhooks.listSubscriptionsWithHealth(db, request.params.tenantId, clock.now()) }),
  );
}
