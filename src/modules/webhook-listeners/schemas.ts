/** The sandbox's webhook listeners (issue 18): what `svc listen` opens and streams from. */
import { type Static, Type } from 'typebox';
import { DateTime } from '../../http/schemas.js';
import { EVENT_TYPES } from '../outbox/types.js';
import { EventTypeSchema } from '../outbox/event-schemas.js';
import { WebhookSecret } from '../webhook-subscriptions/schemas.js';

export const ListenerCreateBody = Type.Object(
  {
    eventTypes: Type.Optional(
      Type.Array(EventTypeSchema, {
        minItems: 1,
        maxItems: EVENT_TYPES.length,
        uniqueItems: true,
        description: 'Only these event types (non-empty, distinct); omitted: every event type.',
      }),
    ),
    secret: Type.Optional(
      WebhookSecret(
        'Shared secret for v1 signatures, used exactly as given (at least 16 characters, counted as Unicode code points); omitted: a new one is made. Give the same one at every start (svc listen does) and your receiver is configured once.',
      ),
    ),
  },
  { additionalProperties: false, title: 'Webhook listener create body' },
);
export type ListenerCreate = Static<typeof ListenerCreateBody>;

export const Listener = Type.Object(
  {
    id: Type.String({ description: 'Opaque identifier with the whl_ prefix.' }),
    eventTypes: Type.Array(EventTypeSchema, { description: 'The event types it receives.' }),
    secret: Type.String({
      description:
        "The listener's v1 signing secret, the one you gave or else made for it, shown only here: give it to your receiver to verify what arrives.",
    }),
    streamPath: Type.String({
      description: 'Where to open its stream (a WebSocket, with the same bearer token): GET this path with Upgrade.',
      examples: ['/api/v1/sandbox/webhook-listeners/whl_0123/stream'],
    }),
    graceSeconds: Type.Integer({
      minimum: 1,
      description:
        'How long it lives without a stream (before the first one, and after one drops) before it closes (WEBHOOK_LISTENER_GRACE).',
    }),
    createdAt: DateTime(),
  },
  { additionalProperties: false, title: 'Webhook listener' },
);
export type ListenerValue = Static<typeof Listener>;

export const ListenerDocument = Type.Object({ data: Listener }, { additionalProperties: false });
