/**
 * The three webhook subscription endpoints (SPEC: Endpoints, Webhook subscriptions). No Idempotency-Key
 * or If-Match here: both headers are ignored (DECISIONS: Idempotency).
 */
import type { AppContext } from '../../app-context.js';
import { IdParams, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import {
  SubscriptionCreateBody,
  SubscriptionDocument,
  SubscriptionList,
  SUBSCRIPTION_LIMIT_PROBLEM_ID,
  SubscriptionLimitProblem,
  SubscriptionPatchBody,
} from './schemas.js';
import * as subscriptions from './service.js';

const tags = ['Webhook subscriptions'];
/** Create and activation can also answer 422 with the subscription-limit problem. */
const limitForms = { 422: [SUBSCRIPTION_LIMIT_PROBLEM_ID] };

export function registerWebhookRoutes(app: Api, ctx: AppContext): void {
  const { db, clock } = ctx;
  const deps: subscriptions.SubscriptionDeps = {
    db,
    destinations: ctx.destinations,
    encryptionKey: ctx.keys.webhookEncryptionKey,
  };
  app.addSchema(SubscriptionLimitProblem);

  app.get(
    '/api/v1/webhook-subscriptions',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookSubscriptions',
        summary: 'List webhook subscriptions',
        description:
          'Every subscription of your client, oldest first, in one list (no pagination). Secrets are never returned.',
        tags,
        querystring: NoQuery,
        response: { 200: SubscriptionList, ...problemResponses([401, 403, 422, 429]) },
      },
    },
    async (request) => ({ data: await subscriptions.listSubscriptions(db, request.auth.tenantId) }),
  );

  app.post(
    '/api/v1/webhook-subscriptions',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'createWebhookSubscription',
        summary: 'Create a webhook subscription',
        description:
          'The new subscription is active and signs with v1. The destination is checked (URL rules and every DNS address) but not contacted: no test event is sent. ' +
          'A client may have 16 active subscriptions unless the operator set another limit; one more is 422 subscription-limit-reached (deactivate one first). ' +
          'It may hold 100 inactive ones beside them; a create past that is 422 subscription-limit-reached with maxSubscriptions (there is no delete: reuse an inactive one). ' +
          'Not idempotent: after a lost response, list and reconcile before creating again (a second subscription means a second delivery of each event).',
        tags,
        body: SubscriptionCreateBody,
        response: {
          201: SubscriptionDocument,
          ...problemResponses(
            [401, 403, 422, 429, 503],
            {
              403: 'The token lacks webhooks:write, or webhook access is not enabled for your client.',
              422: 'Validation failed, or the destination violates the policy (errors.targetUrl names the rule and the address), or your client already has as many active subscriptions, or subscriptions in all, as it may have (subscription-limit-reached, with maxActiveSubscriptions, and maxSubscriptions for the second).',
              503: 'A temporary DNS failure while checking the destination; retry later.',
            },
            limitForms,
            { 422: ['subscription-limit-reached'] },
          ),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send({ data: await subscriptions.createSubscription(deps, request.auth.tenantId, request.body, clock.now()) }),
  );

  app.patch(
    '/api/v1/webhook-subscriptions/:id',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'updateWebhookSubscription',
        summary: 'Update a webhook subscription',
        description:
          'Only supplied fields change. A new secret rotates it (the signing version stays); signingVersion v1 with a secret upgrades a legacy subscription; ' +
          'downgrading is refused. The destination is checked again on every patch except one that only sets isActive false. ' +
          'Setting isActive true on an inactive subscription needs room under the active-subscription limit (422 subscription-limit-reached otherwise); setting it false always succeeds and frees a place. ' +
          'Without webhook access for your client a patch is 403, except one that only sets isActive false: a tenant can always stop what is sent to it.',
        tags,
        params: IdParams,
        body: SubscriptionPatchBody,
        response: {
          200: SubscriptionDocument,
          ...problemResponses(
            [401, 403, 404, 409, 422, 429, 503],
            {
              409: 'The signing version changed while this update was in flight (signing-version-conflict): list again and repeat if still needed.',
              422: 'Validation failed, a downgrade or an upgrade without a secret, the destination violates the policy, or isActive true would exceed the active-subscription limit (subscription-limit-reached, with maxActiveSubscriptions).',
              503: 'A temporary DNS failure while checking the destination; retry later.',
            },
            limitForms,
            { 409: ['signing-version-conflict'], 422: ['subscription-limit-reached'] },
          ),
        },
      },
    },
    async (request) => ({
      data: await subscriptions.patchSubscription(
        deps,
        request.auth.tenantId,
        request.params.id,
        request.body,
        clock.now(),
      ),
    }),
  );
}
