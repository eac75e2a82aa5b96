/** Delivery records with their attempts, and the operator's filters and retries of them (operator API). */
import { type Static, Type } from 'typebox';
import { DateTime, DateTimeInput, Nullable, StringEnum } from '../../http/schemas.js';
import { EventTypeSchema } from './event-schemas.js';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const DeliveryAttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    at: DateTime('When the attempt started (was claimed).'),
    statusCode: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when no response came." })),
    error: Nullable(Type.String({ description: 'Why the attempt failed; null for a 2xx.' })),
    durationMs: Nullable(
      Type.Integer({ minimum: 0, description: 'null when the worker stopped before an outcome was recorded.' }),
    ),
  },
  { additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    deliveryId: Type.String({ description: 'Equals the x-svc-delivery-id header of every attempt.' }),
    eventId: Type.String(),
    eventType: Type.String(),
    subscriptionId: Type.String({
      description: 'The webhook subscription delivered to, or the sandbox webhook listener (targetKind listener).',
    }),
    targetKind: StringEnum(['subscription', 'listener'] as const, {
      description:
        "subscription: a webhook subscription's URL; listener: a sandbox webhook listener's stream (`svc listen`), whose id (whl_…) subscriptionId holds.",
    }),
    tenantId: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer({ minimum: 0, description: 'Claimed attempts, across operator retries.' }),
    attemptLog: Type.Array(DeliveryAttemptSchema),
    nextAttemptAt: Nullable(DateTime('When a pending delivery is next due (or its current lease ends).')),
    lastError: Nullable(Type.String()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
    completedAt: Nullable(DateTime()),
  },
  { additionalProperties: false, title: 'Webhook delivery' },
);
export type DeliveryValue = Static<typeof Delivery>;

/** The filters shared by the delivery list and the bulk retry; every one optional and exact. */
const deliveryFilters = {
  tenantId: Type.Optional(Type.String({ maxLength: 100 })),
  eventId: Type.Optional(Type.String({ maxLength: 100 })),
  eventType: Type.Optional(EventTypeSchema),
  subscriptionId: Type.Optional(Type.String({ maxLength: 100 })),
  createdFrom: Type.Optional(DateTimeInput('Deliveries queued at or after this time.')),
  createdBefore: Type.Optional(DateTimeInput('Deliveries queued before this time.')),
};

export const DeliveryListQuery = Type.Object(
  {
    ...deliveryFilters,
    status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
    order: Type.Optional(
      StringEnum(['asc', 'desc'] as const, {
        description: 'By the time queued: asc (oldest first, the default) or desc (newest first).',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 1000, description: 'At most this many records.' }),
    ),
    after: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          'A delivery id: only the records after it in this order (the next page: the last deliveryId of the page before, with the same filters and order). 422 when no delivery has this id.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeliveryListQueryValue = Static<typeof DeliveryListQuery>;

export const DeliveryParams = Type.Object(
  { deliveryId: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);

export const BulkRetryBody = Type.Object(
  {
    ...deliveryFilters,
    dryRun: Type.Optional(
      Type.Boolean({ default: false, description: 'true: count the failed deliveries that match, change nothing.' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Which terminally failed deliveries to retry; no filter at all means every failed delivery.',
  },
);
export type BulkRetryBodyValue = Static<typeof BulkRetryBody>;

export const BulkRetryResult = Type.Object(
  {
    dryRun: Type.Boolean(),
    matched: Type.Integer({
      minimum: 0,
      description: 'Failed deliveries matching the filter (when not a dry run: those reopened).',
    }),
  },
  { additionalProperties: false },
);
export type BulkRetryResultValue = Static<typeof BulkRetryResult>;
