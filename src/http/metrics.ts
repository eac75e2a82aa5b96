/**
 * What the HTTP layer reports to the process's metrics: every answered request by route template,
 * method and status with its latency, idempotent replays and conflicts; and `GET /metrics` on the main
 * port, registered in the operator API's scope (so behind the operator token) and kept out of the documents.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../runtime/metrics.js';
import { Problem } from './problem.js';

export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    // The route's template keeps the label set small; a request no route matched is "unmatched".
    metrics.requests.record(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    if (reply.getHeader('idempotent-replayed') === 'true') metrics.idempotency.inc({ outcome: 'replayed' });
    done();
  });
  app.addHook('onError', async (_request, _reply, error) => {
    if (error instanceof Problem && error.slug === 'idempotency-conflict')
      metrics.idempotency.inc({ outcome: 'conflict' });
  });
}

/** GET /metrics in the Prometheus text format; call inside the operator API's plugin. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });
}
