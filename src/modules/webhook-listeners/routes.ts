/**
 * The sandbox's webhook listeners (issue 18), registered only when ENVIRONMENT=sandbox (production answers
 * the usual 404 and its document has no trace of them): open one, stream its deliveries over a WebSocket
 * (@fastify/websocket, docs/decisions.md), close it. `svc listen` is their client.
 */
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.js';
import { noStoreHeaders } from '../../http/headers.js';
import { Problem } from '../../http/problem.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { ListenerHub } from './hub.js';
import { ListenerCreateBody, ListenerDocument } from './schemas.js';
import * as service from './service.js';
import { SPARE_FRAMES } from './frame-budget.js';
import { MAX_UNREAD_BYTES } from './stream.js';

const tags = ['Sandbox'];

const STREAM_PROTOCOL = [
  'Then open its stream: `GET streamPath` as a WebSocket (wss:// on an https base address) with the same `Authorization: Bearer` header. Openings of streams are counted in a window of their own, as many a minute per address as the rate limit allows requests (past it, 429 with `Retry-After`), so your other calls never hold a stream back; a refused one (401, 403, 404, 426, 429) is also counted as a request. Messages are JSON text frames:',
  '',
  '- server → you, once connected: `{"type": "ready", "listenerId", "timeoutMs", "graceMs"}`;',
  '- server → you, one per delivery attempt: `{"type": "attempt", "deliveryId", "attempt", "eventId", "eventType", "headers", "body", "lastAttempt", "retryInMs"}`: `headers` and `body` are exactly those of a real delivery of that attempt (every `x-svc-*` header; signed with the listener\'s secret and a fresh timestamp). `lastAttempt` is true when no retry follows this attempt whatever it comes to (the delivery\'s attempts are spent: if it fails, the delivery fails); otherwise `retryInMs` says when a retry would come: the retry schedule\'s wait after this attempt, in milliseconds (varied by ±20%), null on the last attempt;',
  `- you → server, one per attempt: \`{"type": "result", "deliveryId", "attempt", "statusCode", "durationMs"}\` with your receiver's status, or \`{"type": "result", "deliveryId", "attempt", "error", "durationMs"}\` when it could not be reached. No result within \`timeoutMs\` is a timeout. Anything but 2xx is retried on the retry schedule, like any delivery. While more than ${MAX_UNREAD_BYTES / 1024 / 1024} MiB of what was sent to you is unread (a client that stopped reading or cannot keep up), attempts wait at the server (their timeout runs) and are sent as you read; a stream that answers no ping is cut, and a new stream gets what was not answered at once. Send nothing else: besides one frame per attempt (and a pong per ping) a stream may carry ${SPARE_FRAMES} frames from you; the next closes it with 1008.`,
  '',
  `A listener receives its client's events like a webhook subscription (same outbox, attempt numbering and retries; the operator sees its deliveries with \`targetKind: listener\`), but it is not one: it is not listed with the subscriptions and does not count toward their cap. It lives while its stream is open and for \`graceSeconds\` after the stream drops, in which a new stream resumes it (waiting deliveries are then sent at once); then it closes and its pending deliveries fail with "listener closed". Close codes: 4410 the listener closed, 4409 another stream took it over, 4401 the credentials that opened the stream were revoked or no longer grant webhooks:write (checked every few seconds while it is open), 1001 the server is restarting (reconnect).`,
].join('\n');

export async function registerListenerRoutes(app: Api, ctx: AppContext): Promise<void> {
  if (ctx.config.environment !== 'sandbox') return;
  const { db, clock } = ctx;
  const deps: service.ListenerDeps = {
    db,
    encryptionKey: ctx.keys.webhookEncryptionKey,
    graceMs: ctx.config.webhook.listenerGraceMs,
  };
  const hub = new ListenerHub({
    database: ctx.database,
    clock,
    logger: (app as unknown as FastifyInstance).log as never,
    config: ctx.config.webhook,
    keys: ctx.keys,
    credentialStatus: ctx.credentialStatus,
  });
  app.addHook('onClose', () => hub.stop());

  app.post(
    '/api/v1/sandbox/webhook-listeners',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'createWebhookListener',
        summary: 'Open a webhook listener: receive your events on your own machine (sandbox only)',
        description: [
          'Sandbox only: this path does not exist in production. What `svc listen --forward-to <url>` uses: the events of your client are delivered over a stream that your command holds, and it forwards them to any address on your machine. The server never connects anywhere for a listener.',
          '',
          "The answer carries the listener's signing `secret`, shown only here: the `secret` you sent, or else a new one made for it. Send the same `secret` every time you open a listener (`svc listen` keeps one per client id on your machine) and your receiver keeps verifying across restarts. At most 5 listeners are open per client (422 `listener-limit-reached`).",
          '',
          STREAM_PROTOCOL,
        ].join('\n'),
        tags,
        body: ListenerCreateBody,
        response: {
          201: { ...ListenerDocument, headers: noStoreHeaders },
          ...problemResponses(
            [401, 403, 422, 429],
            {
              403: 'The token lacks webhooks:write, or webhook access is not enabled for your client.',
              422: 'Validation failed, or your client already has 5 open listeners (listener-limit-reached).',
            },
            {},
            { 422: ['listener-limit-reached'] },
          ),
        },
      },
    },
    async (request, reply) => {
      const listener = await service.createListener(deps, request.auth.tenantId, request.body, clock.now());
      // This process now sweeps listeners past their grace (any process holding a stream does too).
      await hub.activate();
      return reply.code(201).header('cache-control', 'no-store').send({ data: listener });
    },
  );

  app.delete(
    '/api/v1/sandbox/webhook-listeners/:id',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'closeWebhookListener',
        summary: 'Close a webhook listener (sandbox only)',
        description:
          'Ends its stream (close code 4410) and fails its pending deliveries ("listener closed"). Closing a closed listener changes nothing (204).',
        tags,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Closed.' }), ...problemResponses([401, 403, 404, 415, 429]) },
      },
    },
    async (request, reply) => {
      if (await service.closeListener(db, request.auth.tenantId, request.params.id, clock.now()))
        await hub.announceClosed([request.params.id]);
      return reply.code(204).send(null);
    },
  );

  // The WebSocket plugin routes every upgrade request through Fastify on the raw socket, and closes that socket
  // only after its own route's refusals: an upgrade request answered anywhere else (/health, a 401, a 404, a 429
  // before its hooks) left the socket open for ever, its client gone or not (hostile-tenant probe). Ended
  // once the answer is written; an upgraded stream is hijacked and never reaches onResponse.
  app.addHook('onResponse', (request, _reply, done) => {
    // Node's parser sets `upgrade` (not in its types) on the requests it handed to the upgrade listener.
    const { socket, upgrade } = request.raw as typeof request.raw & { upgrade?: boolean };
    if (upgrade) socket.end(() => socket.destroy());
    done();
  });

  // The stream, in a context of its own: only its route is wrapped by the WebSocket plugin.
  await app.register(async (streams) => {
    await streams.register(websocket, { options: { maxPayload: 64 * 1024 } });
    (streams as unknown as FastifyInstance).route<{ Params: { id: string } }>({
      method: 'GET',
      url: '/api/v1/sandbox/webhook-listeners/:id/stream',
      config: { scope: 'webhooks:write', rateLimit: false },
      schema: { params: IdParams, hide: true },
      // Before the upgrade, so that a refusal is an HTTP answer (401, 403, 404).
      preHandler: async (request) =>
        service.assertStreamable(db, request.auth.tenantId, request.params.id, clock.now()),
      // A request that asks no upgrade gets a problem (the plugin's own answer is a bare 404 without a body).
      handler: async () => {
        throw new Problem('upgrade-required', 'This is a WebSocket stream: open it with Upgrade: websocket.', {
          headers: { upgrade: 'websocket', connection: 'Upgrade' },
        });
      },
      wsHandler: (socket, request) => hub.attach(socket, request.params.id, request.auth),
    });
  });
}
