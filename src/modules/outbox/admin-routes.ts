/** Operator API: the delivery records with their attempt logs, and their retry. */
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { DataOf as data, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { BulkRetryBody, BulkRetryResult, Delivery, DeliveryListQuery, DeliveryParams } from './delivery-schemas.js';
import * as deliveries from './operator-deliveries.js';

const tags = ['Webhooks'];

export function registerDeliveryAdminRoutes(app: Api, ctx: AppContext): void {
  const { db, clock } = ctx;

  app.get(
    '/admin/v1/deliveries',
    {
      schema: {
        operationId: 'listDeliveries',
        summary: 'List webhook deliveries with their attempts',
        description:
          'At most `limit` (default and maximum 1000), oldest first unless `order=desc`. Every filter is optional and exact; `createdFrom` (inclusive) and `createdBefore` (exclusive) bound the time each delivery was queued (its event recorded). The next page: the same query with `after` set to the last `deliveryId` of this one; a page shorter than `limit` is the last.',
        tags,
        querystring: DeliveryListQuery,
        response: { 200: data(Type.Array(Delivery)), ...problemResponses([401, 422]) },
      },
    },
    async (request) => ({ data: await deliveries.listDeliveries(db, request.query) }),
  );

  app.get(
    '/admin/v1/deliveries/:deliveryId',
    {
      schema: {
        operationId: 'getDelivery',
        summary: 'Get one webhook delivery with its attempt log',
        description:
          'The delivery of one event to one subscription, with its status, the log of every attempt (status code, error, duration) and when the next attempt is due.',
        tags,
        params: DeliveryParams,
        querystring: NoQuery,
        response: { 200: data(Delivery), ...problemResponses([401, 404]) },
      },
    },
    async (request) => ({ data: await deliveries.getDelivery(db, request.params.deliveryId) }),
  );

  app.post(
    '/admin/v1/deliveries/retry-failed',
    {
      schema: {
        operationId: 'retryFailedDeliveries',
        summary: 'Retry every terminally failed delivery matching a filter (or count them: dryRun)',
        description:
          'The filters of the delivery list (status is always failed). With `dryRun: true` nothing changes and `matched` is how many a retry would reopen (200); without, each match gets a fresh budget of WEBHOOK_MAX_ATTEMPTS attempts with its event id kept, in one statement (202). Count first, then retry with the same filter.',
        tags,
        body: BulkRetryBody,
        response: { 200: data(BulkRetryResult), 202: data(BulkRetryResult), ...problemResponses([401, 422]) },
      },
    },
    async (request, reply) => {
      const result = await deliveries.retryFailedDeliveries(db, request.body, clock.now());
      return reply.code(result.dryRun ? 200 : 202).send({ data: result });
    },
  );

  app.post(
    '/admin/v1/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'retryDelivery',
        summary: 'Retry a terminally failed delivery',
        description:
          'Opens a fresh budget of WEBHOOK_MAX_ATTEMPTS attempts with the same event id; x-svc-attempt keeps counting.',
        tags,
        params: DeliveryParams,
        response: {
          202: data(Delivery),
          ...problemResponses(
            [401, 404, 409],
            { 409: 'The delivery is not terminally failed (invalid-state).' },
            {},
            { 409: ['invalid-state'] },
          ),
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send({ data: await deliveries.retryDelivery(db, request.params.deliveryId, clock.now()) }),
  );
}
