/**
 * During shutdown, in-flight requests finish while requests that still arrive on open keep-alive
 * connections are refused with a 503 problem (and `Connection: close`), so the client retries elsewhere.
 * Replaces Fastify's own `return503OnClosing`, whose body is not a problem.
 */
import type { FastifyInstance } from 'fastify';
import { Problem } from './problem.js';

export function registerShutdownRefusal(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback style, like the other hooks every request passes: no promise per request.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(
      new Problem('service-unavailable', 'The service is shutting down. Retry the request.', {
        headers: { 'retry-after': '1' },
      }),
    );
  });
}
