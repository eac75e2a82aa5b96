/** Site-visit lifecycle events (SPEC: Events), and a delivery of one as a worker holds it. */
import type { EventRow, WebhookSubscriptionRow } from '../../db/schema.js';

export const EVENT_TYPES = [
  'ticket.created',
  'rep.assigned',
  'job.scheduled',
  'schedule.updated',
  'job.dispatched',
  'job.completed',
  'deliverables.transmitted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The date-form label of the event body's shape; bumped when the body changes incompatibly. */
export const PAYLOAD_VERSION = '2026-11-01';

/** Members every event's data carries; a member without a value is null, never absent (DECISIONS). */
export interface EventDataBase {
  clientTicketNumber: string | null;
  clientSiteId: string | null;
  status: string;
}

/** The envelope delivered to receivers, exactly as stored. */
export interface EventEnvelope {
  id: string;
  type: EventType;
  occurredAt: string;
  resourceType: 'site-visits';
  resourceId: string;
  payloadVersion: string;
  data: EventDataBase & Record<string, unknown>;
}

/** An event as a delivery carries it: its row as stored, but for the numbering that only listings read. */
export type ClaimedEvent = Omit<EventRow, 'seq' | 'created_at'>;

/** A claimed delivery with what its attempt needs: the event and the subscription as they are now. */
export interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  attempt: number;
  round_start: number;
  event: ClaimedEvent;
  subscription: Pick<WebhookSubscriptionRow, 'id' | 'target_url' | 'is_active' | 'signing_version' | 'secret_sealed'>;
}
