/** Operator API: legacy subscriptions, subscription health, and the delivery records with their retry. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../app-context.js';
import { DataOf as data, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { TenantParams } from '../tenants/schemas.js';
import { AdminSubscriptionCreateBody, Delivery, DeliveryListQuery, DeliveryParams, Subscription, SubscriptionWithHealth } from './schemas.js';
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
        description: 'For subscriptions carried over from before v1: signed with the server-held legacy key until the client upgrades it. The destination rules apply.',
        tags,
        params: TenantParams,
        body: AdminSubscriptionCreateBody,
        response: { 201: data(Subscription), ...problemResponses([401, 404, 422, 503]) },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await webhooks.createLegacySubscription({ db, destinations: ctx.destinations }, request.params.tenantId, request.body, clock.now()),
      }),
  );

  app.get(
    '/admin/v1/tenants/:tenantId/webhook-subscriptions',
    {
      schema: {
        operationId: 'listTenantWebhookSubscriptions',
        summary: "List a tenant's webhook subscriptions with their delivery health",
        tags,
        params: TenantParams,
        response: { 200: data(Type.Array(SubscriptionWithHealth)), ...problemResponses([401, 404]) },
      },
    },
    async (request) => ({ data: await webhooks.listSubscriptionsWithHealth(db, request.params.tenantId) }),
  );

  app.get(
    '/admin/v1/deliveries',
    {
      schema: {
        operationId: 'listDeliveries',
        summary: 'List webhook deliveries with their attempts',
        description: 'Oldest first, at most `limit` (default and maximum 1000); every filter is optional and exact.',
        tags,
        querystring: DeliveryListQuery,
        response: { 200: data(Type.Array(Delivery)), ...problemResponses([401, 422]) },
      },
    },
    async (request) => ({ data: await webhooks.listDeliveries(db, request.query) }),
  );

  app.post(
    '/admin/v1/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'retryDelivery',
        summary: 'Retry a terminally failed delivery',
        description: 'Opens a fresh budget of WEBHOOK_MAX_ATTEMPTS attempts with the same event id; x-svc-attempt keeps counting.',
        tags,
        params: DeliveryParams,
        response: {
          202: data(Delivery),
          ...problemResponses([401, 404, 409], { 409: 'The delivery is not terminally failed (invalid-state).' }),
        },
      },
    },
    async (request, reply) => reply.code(202).send({ data: await webhooks.retryDelivery(db, request.params.deliveryId, clock.now()) }),
  );
}
