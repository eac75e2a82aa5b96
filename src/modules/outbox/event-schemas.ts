/**
 * The event body delivered to webhook receivers (SPEC: Events, Envelope), one schema per event type:
 * the envelope members, and in `data` the members every event carries plus the type's own ones.
 * A member without a value is null, never absent (DECISIONS). These schemas are the published contract
 * (the OpenAPI document's `webhooks`): what is delivered must match them.
 */
import { type TObject, type TProperties, Type } from 'typebox';
import { CalendarDate, DateTime, Nullable, StringEnum, TimeOfDay } from '../../http/schemas.js';
import type { VisitStatus } from '../site-visits/statuses.js';
import { EVENT_TYPES, type EventType, PAYLOAD_VERSION } from './types.js';

export const EventTypeSchema = StringEnum(EVENT_TYPES, { description: 'A site-visit lifecycle event type.' });

/** When each event is emitted (SPEC: Event types). */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'ticket.created':
    "A site visit was created, through the API or by the operator outside the API (the visit is then given an API visit_ id before publishing; one created visit produces one delivery). Published whatever the client's webhook access and API-enabled settings.",
  'rep.assigned':
    'The field-rep assignment of the visit changed. data carries fieldRepName only, never contact details; when the rep is cleared, fieldRepName is "Awaiting reassignment".',
  'job.scheduled': 'A schedule date and an optional ETA time were entered on the visit.',
  'schedule.updated':
    'An already entered schedule date or ETA time changed before dispatch. data carries the whole schedule as it now stands (etaTime null when the new schedule has none).',
  'job.dispatched': 'The job is locked in and dispatched to the field rep.',
  'job.completed': 'The visit status became Completed after quality review passed.',
  'deliverables.transmitted':
    'Field-rep deliverables and notes were transmitted to the client. Happens after dispatch, possibly more than once (for example a first set of photos, then the completion report).',
};

/** The visit's status after each event: what `data.status` can be. */
export const EVENT_STATUSES: Record<EventType, readonly VisitStatus[]> = {
  'ticket.created': ['New'],
  'rep.assigned': ['New', 'Scheduled', 'Dispatched'],
  'job.scheduled': ['Scheduled'],
  'schedule.updated': ['Scheduled'],
  'job.dispatched': ['Dispatched'],
  'job.completed': ['Completed'],
  'deliverables.transmitted': ['Dispatched', 'Completed'],
};

function commonData(type: EventType): TProperties {
  return {
    clientTicketNumber: Nullable(
      Type.String({ description: "The client's own ticket reference of the visit; null when none was given." }),
    ),
    clientSiteId: Nullable(Type.String({ description: "The siteCode of the visit's site at the time of the event." })),
    status: StringEnum(EVENT_STATUSES[type], {
      description:
        "The visit status after the event (New → Scheduled → Dispatched → Completed, moved by the operator's workflow only).",
    }),
  };
}

const scheduleData = {
  scheduledDate: CalendarDate('The scheduled date, YYYY-MM-DD.'),
  etaTime: Nullable(TimeOfDay('Expected arrival time HH:MM (24-hour), or null when not given.')),
};

/** The members of `data` beyond the common ones, per event type. */
const OWN_DATA: Record<EventType, TProperties> = {
  'ticket.created': {},
  'rep.assigned': {
    fieldRepName: Type.String({
      description:
        'The assigned field rep\'s name only (no contact details); "Awaiting reassignment" when the rep was cleared.',
      examples: ['Jordan Lee'],
    }),
  },
  'job.scheduled': scheduleData,
  'schedule.updated': scheduleData,
  'job.dispatched': {},
  'job.completed': {},
  'deliverables.transmitted': {
    notes: Nullable(Type.String({ description: "The field rep's notes transmitted with the deliverables, or null." })),
  },
};

function envelope(type: EventType, data: TProperties): TObject {
  return Type.Object(
    {
      id: Type.String({
        pattern: '^evt_[0-9a-z]+$',
        description: 'The event id (evt_ prefix): the deduplication key. Retries keep it.',
        examples: ['evt_8k2mq4x7b1c9d3f5g6h0j2n4p6'],
      }),
      type: Type.Literal(type),
      occurredAt: DateTime('When the event happened (not the delivery order).'),
      resourceType: Type.Literal('site-visits'),
      resourceId: Type.String({ pattern: '^visit_[0-9a-z]+$', description: "The visit's API id (visit_ prefix)." }),
      payloadVersion: Type.String({ description: "Date-form label of the body's shape.", examples: [PAYLOAD_VERSION] }),
      data: Type.Object({ ...commonData(type), ...data }, { additionalProperties: false }),
    },
    { additionalProperties: false, title: `${type} event`, description: EVENT_DESCRIPTIONS[type] },
  );
}

export const EVENT_ENVELOPE_SCHEMAS = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, envelope(type, OWN_DATA[type])]),
) as Record<EventType, TObject>;
