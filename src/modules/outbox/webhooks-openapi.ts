/**
 * The events as the OpenAPI document's top-level `webhooks` map (OpenAPI 3.1): for each event type the
 * POST a receiver gets, with the envelope schema, every delivery header (SPEC: Delivery headers) and the
 * answers the service expects.
 */
import { Type } from 'typebox';
import type { JsonObject } from '../../http/openapi.js';
import { EVENT_DESCRIPTIONS } from './event-schemas.js';
import { EVENT_TYPES, type EventType } from './types.js';

export const WEBHOOK_TAG = 'Webhook events';

const SIGNATURE_V1 =
  'For v1 subscriptions: the lower-case hex HMAC-SHA256, keyed with the exact UTF-8 bytes of your subscription secret (no trimming, normalisation or decoding), over `x-svc-timestamp` + "." + the raw request body bytes. For legacy subscriptions the body is signed with a server-held key you cannot obtain: upgrade to v1 (PATCH the subscription with signingVersion v1 and a secret).';

/** The delivery headers: name, schema, whether every delivery carries it. */
export const DELIVERY_HEADERS: { name: string; required: boolean; schema: JsonObject; description: string }[] = [
  {
    name: 'x-svc-event-id',
    required: true,
    schema: Type.String({ pattern: '^evt_[0-9a-z]+$' }),
    description: "The event id, equal to the body's id. Deduplicate on the body id in durable storage.",
  },
  {
    name: 'x-svc-event-type',
    required: true,
    schema: { type: 'string', enum: [...EVENT_TYPES] },
    description: "The event type, equal to the body's type.",
  },
  {
    name: 'x-svc-delivery-id',
    required: true,
    schema: Type.String(),
    description:
      'Identifies this delivery (one event to one subscription); the same on every attempt of it. Not a deduplication key: a second subscription delivers the same event under another delivery id.',
  },
  {
    name: 'x-svc-attempt',
    required: true,
    schema: Type.Integer({ minimum: 1 }),
    description: 'The attempt number of this delivery, from 1; it keeps counting after an operator retry.',
  },
  {
    name: 'x-svc-signature',
    required: true,
    schema: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    description: SIGNATURE_V1,
  },
  {
    name: 'x-svc-signature-alg',
    required: true,
    schema: Type.Literal('hmac-sha256'),
    description: 'The signature algorithm: always hmac-sha256.',
  },
  {
    name: 'x-svc-signature-version',
    required: false,
    schema: Type.Literal('v1'),
    description:
      'v1 on deliveries of v1 subscriptions (absent on legacy ones). Pin it: reject a delivery without it, and never fall back to legacy verification after a failure.',
  },
  {
    name: 'x-svc-timestamp',
    required: false,
    schema: Type.String({ pattern: '^(0|[1-9][0-9]*)$' }),
    description:
      'v1 only: the signing time as canonical decimal Unix seconds. Refuse the delivery unless it is within 300 seconds of your clock (either direction). A retry is signed afresh with a new timestamp; freshness is judged by this timestamp, not by occurredAt.',
  },
];

const VERIFY =
  'Verify before parsing: check `x-svc-signature-version` is v1 and `x-svc-signature-alg` is hmac-sha256, check `x-svc-timestamp` is within 300 seconds of your clock, compute the HMAC over the timestamp, a period and the raw body bytes, and compare it with `x-svc-signature` in constant time. Only then parse the JSON.';

const GATING: Record<'always' | 'enabled', string> = {
  always: "Published to every active subscription listing this type, whatever the client's API-enabled setting.",
  enabled:
    "Comes from the operator's workflow and is published only while webhook access and the API-enabled setting are on for your client.",
};

/** `ticket.created` → `TicketCreatedEvent`. */
export function eventSchemaName(type: EventType): string {
  return `${type
    .split(/[.-]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')}Event`;
}

function plain(schema: unknown): JsonObject {
  // TypeBox schemas carry symbols; the document holds plain JSON.
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

function webhookOperation(type: EventType): JsonObject {
  return {
    post: {
      operationId: `${eventSchemaName(type)[0]!.toLowerCase()}${eventSchemaName(type).slice(1)}`,
      summary: type,
      description: [EVENT_DESCRIPTIONS[type], GATING[type === 'ticket.created' ? 'always' : 'enabled'], VERIFY].join(
        '\n\n',
      ),
      tags: [WEBHOOK_TAG],
      security: [],
      parameters: DELIVERY_HEADERS.map((header) => ({
        name: header.name,
        in: 'header',
        required: header.required,
        description: header.description,
        schema: plain(header.schema),
      })),
      requestBody: {
        required: true,
        description: 'The event, sent as `Content-Type: application/json`. Deliveries are at least once and unordered.',
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${eventSchemaName(type)}` } } },
      },
      responses: {
        '2XX': {
          description:
            'Accepted. Answer 2xx only once the event is stored durably, and also for an event id you already accepted (a redelivery).',
        },
        default: {
          description:
            "Any other answer (4xx and 429 included), a timeout (10 seconds by default) or a network failure is retried with the same event id and body, up to 8 attempts in all by default, on the service's own schedule (Retry-After is not honoured). A redirect is not followed and ends the delivery, as does a destination that fails the address rules.",
        },
      },
    },
  };
}

/**
 * The `webhooks` map of the client document. Each body refers to the event's envelope schema
 * (EVENT_ENVELOPE_SCHEMAS), named by eventSchemaName among the document's components.
 */
export function eventWebhooks(): JsonObject {
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, webhookOperation(type)]));
}
