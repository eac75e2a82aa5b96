/**
 * Recording events: the outbox. An event is written in the same transaction as the change that causes
 * it, so it exists exactly when the change committed, with its deliveries to the tenant's targets queued
 * beside it by the publishing rule; delivery happens after commit, from the table.
 */
import { type Kysely, type RawBuilder, type SqlBool, sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database, EventRow } from '../../db/schema.js';
import type { CompanionWrites } from '../../db/single-row-insert.js';
import { afterCommit, afterEnd, openedOn } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';
import * as events from './repository/events.js';
import { claimAtBirth, notifyWorkers, wakeWorkers } from './wake-workers.js';
import { type ClaimedEvent, type EventDataBase, type EventEnvelope, type EventType, PAYLOAD_VERSION } from './types.js';
import { isoTimeOf } from '../../lib/iso-time.js';

export interface NewEvent {
  type: EventType;
  occurredAt: Date;
  /** The visit's API id (visit_…). */
  resourceId: string;
  data: EventDataBase & Record<string, unknown>;
}

/** Where the request recording an event says so (its request logger: request id, tenant id). */
export type EventLog = Pick<Logger, 'info'>;

export function toEnvelope(row: ClaimedEvent): EventEnvelope {
  return {
    id: row.id,
    type: row.type as EventType,
    occurredAt: isoTimeOf(row.occurred_at),
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
 * The publishing rule as the SQL condition of the statement that queues an event's deliveries: `isPublishedTo`
 * over the tenant's row, read as `t`, for the event type `eventType` (an SQL expression: the statement
 * reads it from the event's row) (tests/webhooks prove the two agree both ways).
 */
export function publishedToTenantCondition(eventType: RawBuilder<string>): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${eventType} = 'ticket.created' or (t.webhook_access and t.api_enabled))`;
}

/** How the statement that queues an event's deliveries reads the publishing rule (the event as `e`). */
const PUBLISHED = publishedToTenantCondition(sql<string>`e.type`);

/** The event's row as the outbox stores it. */
function newEventRow(event: NewEvent): events.NewEventRow {
  return {
    id: newId('evt'),
    type: event.type,
    occurredAt: event.occurredAt,
    resourceType: 'site-visits',
    resourceId: event.resourceId,
    payloadVersion: PAYLOAD_VERSION,
    data: event.data,
  };
}

/** Says that the event was recorded: the line that joins the request (request id, tenant id) to the event id its deliveries' lines carry. */
function logRecorded(log: EventLog | undefined, row: events.NewEventRow, deliveries: number): void {
  log?.info({ eventId: row.id, eventType: row.type, resourceId: row.resourceId, deliveries }, 'event recorded');
}

/**
 * Records the event and, in the same statement, queues one webhook delivery per active target of the
 * tenant subscribed to its type (subscriptions and listeners alike) when the publishing rule publishes
 * it to the tenant; the workers are woken when the transaction commits. With `log`, says so.
 *
 * In a transaction opened by `transaction()` on a database handle that a delivery worker of this process
 * reads, the deliveries are claimed at birth when that worker can take them (as `eventWithRow` does), and
 * started once the transaction has committed; the claim ends with the transaction however it ends.
 */
export async function recordEvent(
  tx: Transaction<Database>,
  tenantId: string,
  event: NewEvent,
  log?: EventLog,
): Promise<EventRow> {
  const row = newEventRow(event);
  const db = openedOn(tx);
  const claim = db && claimAtBirth(db, tenantId);
  if (claim) afterEnd(tx, () => claim.settled());
  const recorded = await events.insertEventWithDeliveries(tx, tenantId, row, PUBLISHED, claim);
  if (recorded.deliveries.length > 0) {
    if (claim) afterCommit(tx, () => claim.committed(recorded.deliveries));
    else await notifyWorkers(tx);
  }
  logRecorded(log, row, recorded.deliveries.length);
  return recorded.event;
}

/**
 * The event as writes of the statement that inserts the row it is about (`recordEvent` for a create that is
 * one row: `SingleRowInsert.companions`), what to do once that row is committed with the deliveries the
 * statement queued (`SingleRowCreate.afterCreate`), and once the create has ended (`settled`).
 *
 * When a delivery worker of this process reads the queue through `db` and can take them at once, the
 * deliveries are queued already claimed by it (wake-workers.ts's `BirthClaim`): after the commit it
 * delivers them without finding and claiming them first, and the other processes are not woken for rows
 * leased to it. Otherwise the workers are woken to claim them. Either way, a worker that dies leaves a lease
 * that runs out, and the delivery is claimed again.
 */
export function eventWithRow(
  db: Kysely<Database>,
  tenantId: string,
  event: NewEvent,
  log?: EventLog,
): {
  companions: CompanionWrites;
  afterCreate: (companions: unknown, db: Kysely<Database>) => void;
  settled: () => void;
} {
  const row = newEventRow(event);
  const claim = claimAtBirth(db, tenantId);
  return {
    companions: events.eventCompanions(tenantId, row, PUBLISHED, claim),
    afterCreate: (companions, committedOn) => {
      const deliveries = events.queuedDeliveries(tenantId, row, companions);
      if (claim) claim.committed(deliveries);
      else if (deliveries.length > 0) wakeWorkers(committedOn);
      logRecorded(log, row, deliveries.length);
    },
    settled: () => claim?.settled(),
  };
}
