/**
 * Recording events: the outbox. An event is written in the same transaction as the change that causes
 * it, so it exists exactly when the change committed, with its deliveries to the tenant's targets queued
 * beside it by the publishing rule; delivery happens after commit, from the table.
 */
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database, EventRow } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import * as events from './repository/events.js';
import * as queue from './repository/queue.js';
import { type EventDataBase, type EventEnvelope, type EventType, PAYLOAD_VERSION } from './types.js';

export interface NewEvent {
  type: EventType;
  occurredAt: Date;
  /** The visit's API id (visit_…). */
  resourceId: string;
  data: EventDataBase & Record<string, unknown>;
}

/** Where the request recording an event says so (its request logger: request id, tenant id). */
export type EventLog = Pick<Logger, 'info'>;

export function toEnvelope(row: EventRow): EventEnvelope {
  return {
    id: row.id,
    type: row.type as EventType,
    occurredAt: row.occurred_at.toISOString(),
    resourceType: 'site-visits',
    resourceId: row.resource_id,
    payloadVersion: row.payload_version,
    data: row.data as EventEnvelope['data'],
  };
}

/** The tenant settings the publishing rule reads. */
export interface PublishingSettings {
  webhookAccess: boolean;
  apiEnabled: boolean;
}

/**
 * The publishing rule (SPEC: Event types): the lifecycle events that the operator's workflows produce
 * are published only while the tenant has webhook access and the API enabled; for a tenant without them
 * they are not published at all (not held back: they are never delivered).
 */
export function tenantReceivesLifecycleEvents(tenant: PublishingSettings): boolean {
  return tenant.webhookAccess && tenant.apiEnabled;
}

/** ticket.created (the API's own create) is published whatever the settings; every other event by the rule. */
export function isPublishedTo(tenant: PublishingSettings, eventType: string): boolean {
  return eventType === 'ticket.created' || tenantReceivesLifecycleEvents(tenant);
}

/**
 * Queues one delivery of the event per active target of the tenant subscribed to its type, if the event
 * is published to the tenant, in the event's transaction. The tenant's settings come with the targets, in
 * the same statement. Returns how many were queued.
 */
async function enqueueDeliveries(
  tx: Transaction<Database>,
  tenantId: string,
  event: EventRow,
  now: Date,
): Promise<number> {
  const recipients = await queue.findRecipients(tx, tenantId, event.type);
  const published = recipients.filter((recipient) => isPublishedTo(recipient.tenant, event.type));
  if (published.length === 0) return 0;
  const subscriptionIds = published.map((recipient) => recipient.subscriptionId);
  await queue.insertDeliveries(tx, tenantId, event, subscriptionIds, now);
  return published.length;
}

/**
 * Records the event and, in the same transaction, queues one webhook delivery per matching active
 * subscription (the workers are woken when the transaction commits). With `log`, says so: the line that
 * joins the request (request id, tenant id) to the event id its deliveries' lines carry.
 */
export async function recordEvent(
  tx: Transaction<Database>,
  tenantId: string,
  event: NewEvent,
  log?: EventLog,
): Promise<EventRow> {
  const row = await events.insertEvent(tx, tenantId, {
    id: newId('evt'),
    type: event.type,
    occurredAt: event.occurredAt,
    resourceType: 'site-visits',
    resourceId: event.resourceId,
    payloadVersion: PAYLOAD_VERSION,
    data: event.data,
  });
  const deliveries = await enqueueDeliveries(tx, tenantId, row, event.occurredAt);
  log?.info({ eventId: row.id, eventType: row.type, resourceId: row.resource_id, deliveries }, 'event recorded');
  return row;
}
