/** Webhook subscriptions (SPEC: Webhook subscription). */
import { type Static, Type } from 'typebox';
import { DateTime, Nullable, StringEnum, Text, UnprocessableForm } from '../../http/schemas.js';
import { EventTypeSchema } from '../outbox/event-schemas.js';
import { EVENT_TYPES } from '../outbox/types.js';
import { SIGNING_VERSIONS } from '../outbox/signing.js';

/** Maximum lengths (SPEC leaves them open; docs/decisions.md records them). */
export const WEBHOOK_LIMITS = { targetUrl: 2048, description: 500, secretMin: 16, secretMax: 512 } as const;

/** A v1 signing secret given by the client: WEBHOOK_LIMITS.secretMin to secretMax Unicode code points. */
export function WebhookSecret(description: string) {
  return Type.String({ minLength: WEBHOOK_LIMITS.secretMin, maxLength: WEBHOOK_LIMITS.secretMax, description });
}

const fields = {
  targetUrl: Text(WEBHOOK_LIMITS.targetUrl, {
    description:
      'The receiver: https, port 443, no user credentials, fragment, white space or control characters; a host name DNS can carry (at most 253 characters, labels of at most 63); every DNS address of the host must be public.',
    examples: ['https://hooks.example.com/site-services'],
  }),
  eventTypes: Type.Array(EventTypeSchema, {
    minItems: 1,
    maxItems: EVENT_TYPES.length,
    uniqueItems: true,
    description: `Non-empty, distinct event types (so at most the ${EVENT_TYPES.length} there are).`,
  }),
  secret: WebhookSecret(
    'Write-only shared secret for v1 signatures, used exactly as given (at least 16 characters, counted as Unicode code points).',
  ),
  description: Nullable(Text(WEBHOOK_LIMITS.description)),
};

export const SubscriptionCreateBody = Type.Object(
  {
    targetUrl: fields.targetUrl,
    eventTypes: fields.eventTypes,
    secret: fields.secret,
    description: Type.Optional(fields.description),
    signingVersion: Type.Optional(
      Type.Literal('v1', { description: 'Only v1 can be chosen; it is also the default.' }),
    ),
  },
  { additionalProperties: false, title: 'Webhook subscription create body' },
);
export type SubscriptionCreate = Static<typeof SubscriptionCreateBody>;

export const SubscriptionPatchBody = Type.Object(
  {
    targetUrl: Type.Optional(fields.targetUrl),
    description: Type.Optional(fields.description),
    eventTypes: Type.Optional(fields.eventTypes),
    secret: Type.Optional(fields.secret),
    isActive: Type.Optional(Type.Boolean()),
    signingVersion: Type.Optional(
      StringEnum(SIGNING_VERSIONS, {
        description: 'v1 upgrades a legacy subscription (a secret is then required); downgrading to legacy is refused.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'Webhook subscription patch body',
    description: 'Only supplied members change. The destination is checked again on every patch.',
  },
);
export type SubscriptionPatch = Static<typeof SubscriptionPatchBody>;

export const AdminSubscriptionCreateBody = Type.Object(
  {
    targetUrl: fields.targetUrl,
    eventTypes: fields.eventTypes,
    description: Type.Optional(fields.description),
  },
  { additionalProperties: false, title: 'Legacy webhook subscription (operator)' },
);
export type AdminSubscriptionCreate = Static<typeof AdminSubscriptionCreateBody>;

export const Subscription = Type.Object(
  {
    id: Type.String({ description: 'Opaque identifier with the whsub_ prefix.' }),
    tenantId: Type.String(),
    targetUrl: Type.String({ description: 'As given at create or patch.' }),
    description: Nullable(Type.String()),
    eventTypes: Type.Array(EventTypeSchema),
    isActive: Type.Boolean(),
    signingVersion: StringEnum(SIGNING_VERSIONS),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    title: 'Webhook subscription',
    description: 'The secret is write-only and never returned.',
  },
);
export type SubscriptionValue = Static<typeof Subscription>;

/**
 * The 422 subscription-limit-reached problem, with the cap that applies and the count it met. A shared
 * schema (registered by the routes) so that the OpenAPI document shows it beside the validation form.
 */
export const SUBSCRIPTION_LIMIT_PROBLEM_ID = 'SubscriptionLimitProblem';
export const SubscriptionLimitProblem = UnprocessableForm(
  'subscription-limit-reached',
  {
    maxActiveSubscriptions: Type.Integer({
      minimum: 1,
      description: 'How many active subscriptions your client may have (16 unless the operator set another limit).',
    }),
    activeSubscriptions: Type.Integer({ minimum: 0, description: 'How many it has now.' }),
    maxSubscriptions: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Only when a create met the limit on subscriptions held in all, active and inactive (the active limit and 100 inactive ones): that limit.',
      }),
    ),
    subscriptions: Type.Optional(
      Type.Integer({ minimum: 0, description: 'With maxSubscriptions: how many your client holds now.' }),
    ),
  },
  {
    $id: SUBSCRIPTION_LIMIT_PROBLEM_ID,
    title: 'Subscription limit problem (422)',
    description:
      'A create, or a PATCH setting isActive true, would exceed the active-subscription limit: deactivate a subscription (PATCH isActive false) first, or ask the operator to raise the limit. Or a create would exceed the subscriptions your client may hold in all, inactive ones included (maxSubscriptions): there is no delete, so reuse an inactive one (PATCH its targetUrl, eventTypes and secret, and isActive true).',
  },
);

export const SubscriptionDocument = Type.Object({ data: Subscription }, { additionalProperties: false });
export const SubscriptionList = Type.Object({ data: Type.Array(Subscription) }, { additionalProperties: false });

/** A subscription as the operator sees it: the client's view plus its delivery health. */
export const SubscriptionWithHealth = Type.Object(
  {
    ...Subscription.properties,
    health: Type.Object(
      {
        consecutiveFailures: Type.Integer({ minimum: 0 }),
        failingSince: Nullable(DateTime()),
        lastSuccessAt: Nullable(DateTime('Kept to within a second.')),
        lastFailureAt: Nullable(DateTime()),
        lastError: Nullable(Type.String()),
        deactivatedReason: Nullable(
          Type.String({ description: 'Why the service deactivated it (WEBHOOK_AUTO_DISABLE_AFTER), if it did.' }),
        ),
        last24Hours: Type.Object(
          {
            succeeded: Type.Integer({ minimum: 0 }),
            failed: Type.Integer({ minimum: 0 }),
            pending: Type.Integer({ minimum: 0 }),
            successRate: Nullable(
              Type.Number({
                minimum: 0,
                maximum: 1,
                description: 'succeeded / (succeeded + failed); null when none settled.',
              }),
            ),
          },
          { additionalProperties: false, description: 'Its deliveries queued in the last 24 hours, by status.' },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type SubscriptionWithHealthValue = Static<typeof SubscriptionWithHealth>;
