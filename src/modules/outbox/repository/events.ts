import { jsonb } from '../../../db/json.js';
import type { EventRow } from '../../../db/schema.js';
import type { Executor } from '../../../db/executor.js';

export async function insertEvent(
  tx: Executor,
  tenantId: string,
  event: {
    id: string;
    type: string;
    occurredAt: Date;
    resourceType: string;
    resourceId: string;
    payloadVersion: string;
    data: unknown;
  },
): Promise<EventRow> {
  return tx
    .insertInto('events')
    .values({
      id: event.id,
      tenant_id: tenantId,
      type: event.type,
      occurred_at: event.occurredAt,
      resource_type: event.resourceType,
      resource_id: event.resourceId,
      payload_version: event.payloadVersion,
      data: jsonb(event.data),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listEventsOfResource(db: Executor, tenantId: string, resourceId: string): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('resource_id', '=', resourceId)
    .orderBy('seq')
    .execute();
}
