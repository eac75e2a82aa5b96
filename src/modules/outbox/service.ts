/**
 * Recording events: the outbox. An event is written in the same transaction as the change that causes
 * it, so it exists exactly when the change committed; delivery happens after commit, from the table.
 */
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database, EventRow } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { enqueueDeliveries } from './repository/queue.js';
import * as repository from './repository/events.js';
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
  const row = await repository.insertEvent(tx, tenantId, {
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
