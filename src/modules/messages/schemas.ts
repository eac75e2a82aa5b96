/** Messages (SPEC: Message): request bodies, attributes, and the resource as served. */
import { type Static, Type } from 'typebox';
import { ListSchema, ResourceSchema, SingleSchema } from '../../http/envelope.js';
import { PageQuery } from '../../http/pagination.js';
import { DateTime, Nullable, StringEnum, Text } from '../../http/schemas.js';
import { IMMUTABLE_KEYWORD } from '../../http/validation-errors.js';
import { FileObject } from '../files/schemas.js';

export const MESSAGE_TYPES = [
  'Scope Update',
  'Change Appointment',
  'Cancellation',
  'Job On-Hold',
  'Tracking Update',
  'Floor Plan',
  'Other',
  'Reminder',
  'Due Date Change Request',
  'Missed Appointment',
  'Incomplete Scope',
  'Site Prep Issue',
  'MFG/Hardware Issues',
  'Shipping Damage',
  'Pricing Estimate',
  'Warranty Request',
  'Exception',
  'Parts Missing',
  'Schedule Please',
  'Billing Dispute',
  'Request Travel Pay',
  'General',
  'Schedule',
  'Pay',
  'Support',
  'Request',
] as const;

export const MESSAGE_STATUSES = ['Open', 'Closed'] as const;
export const DEFAULT_MESSAGE_STATUS = 'Open';

/** SPEC's four urgency values, each with an en dash (U+2013), as stored and returned. */
export const URGENCIES = [
  'Low \u2013 No immediate action required',
  'Normal \u2013 Standard priority / routine handling',
  'High \u2013 Needs attention soon',
  'Critical \u2013 Immediate action required',
] as const;
export type Urgency = (typeof URGENCIES)[number];

/** The short words also accepted in requests (DECISIONS: Messages), each standing for its full value. */
export const URGENCY_SHORT_FORMS = {
  Low: URGENCIES[0],
  Normal: URGENCIES[1],
  High: URGENCIES[2],
  Critical: URGENCIES[3],
} as const satisfies Record<string, Urgency>;
type UrgencyShortForm = keyof typeof URGENCY_SHORT_FORMS;
const URGENCY_INPUTS = [...URGENCIES, ...(Object.keys(URGENCY_SHORT_FORMS) as UrgencyShortForm[])] as const;

/** The full value for an accepted request value (a full value or a short word). */
export function fullUrgency(value: Urgency | UrgencyShortForm): Urgency {
  return (URGENCY_SHORT_FORMS as Record<string, Urgency>)[value] ?? (value as Urgency);
}

/** Maximum lengths (SPEC leaves them open; docs/decisions.md records them). */
export const MESSAGE_LIMITS = {
  messageThread: 20_000,
  /** Visit ids are `visit_` and 26 characters; anything longer cannot name one. */
  siteVisitId: 100,
} as const;

/** recordOwner of every message created through this API (DECISIONS: Messages). */
export const CLIENT_API_RECORD_OWNER = 'Client API';

const writable = {
  siteVisitId: Text(MESSAGE_LIMITS.siteVisitId, {
    description: 'The id of one of your site visits (visit_ prefix). Not found or not yours: 404.',
  }),
  type: Nullable(StringEnum(MESSAGE_TYPES, { description: 'One of the 26 message types.' })),
  messageThread: Text(MESSAGE_LIMITS.messageThread, { description: 'The message text.' }),
  status: StringEnum(MESSAGE_STATUSES, { description: 'Open (the default on create) or Closed.' }),
  urgency: Nullable(
    StringEnum(URGENCY_INPUTS, {
      description:
        'One of the four full values (each with an en dash, U+2013), or the short word Low, Normal, High or Critical, which is stored and returned as its full value.',
    }),
  ),
  buyer: Nullable(Type.Boolean()),
  clientContacts: Nullable(Type.Boolean()),
};

export const MessageCreateBody = Type.Object(
  {
    siteVisitId: writable.siteVisitId,
    type: Type.Optional(writable.type),
    messageThread: writable.messageThread,
    status: Type.Optional(writable.status),
    urgency: Type.Optional(writable.urgency),
    buyer: Type.Optional(writable.buyer),
    clientContacts: Type.Optional(writable.clientContacts),
  },
  {
    additionalProperties: false,
    title: 'Message create body',
    description:
      'Optional members other than status also accept null, meaning no value. svcPm, recordOwner, method and occurredAt are set by the service.',
  },
);
export type MessageCreate = Static<typeof MessageCreateBody>;

export const MessagePatchBody = Type.Partial(Type.Omit(MessageCreateBody, ['siteVisitId']), {
  additionalProperties: false,
  [IMMUTABLE_KEYWORD]: ['siteVisitId'],
  title: 'Message patch body',
  description:
    'Only supplied members change. type, urgency, buyer and clientContacts accept null to clear them. siteVisitId cannot be changed: a message stays on the visit it was created for.',
});
export type MessagePatch = Static<typeof MessagePatchBody>;

export const MessageAttributes = Type.Object(
  {
    clientId: Type.String({ description: 'The tenant (client) identifier. Read-only.' }),
    status: StringEnum(MESSAGE_STATUSES),
    createdAt: DateTime(),
    updatedAt: DateTime(),
    siteVisitId: Type.String({ description: 'The visit the message belongs to (visit_ prefix).' }),
    type: Type.Optional(Nullable(StringEnum(MESSAGE_TYPES))),
    recordOwner: Type.Optional(
      Type.String({
        description: `Read-only, returned as stored: who owns the record on the operator's side. "${CLIENT_API_RECORD_OWNER}" for messages created through this API.`,
        examples: [CLIENT_API_RECORD_OWNER],
      }),
    ),
    messageThread: Type.String(),
    fileAttachment: Type.Optional(
      Type.Union([FileObject, Type.Null()], {
        description: 'Read-only. The attachment (POST …/file-attachment); null before the first upload.',
      }),
    ),
    urgency: Type.Optional(
      Nullable(StringEnum(URGENCIES, { description: 'Always the full value, whatever form the request used.' })),
    ),
    buyer: Type.Optional(Nullable(Type.Boolean())),
    clientContacts: Type.Optional(Nullable(Type.Boolean())),
    svcPm: Type.Optional(Type.Boolean({ description: 'Read-only; set by the service, true on create.' })),
  },
  { additionalProperties: false },
);
export type MessageAttributesValue = Static<typeof MessageAttributes>;

export const MessageResource = ResourceSchema('messages', MessageAttributes, { idPrefix: 'msg_', title: 'Message' });
export const MessageDocument = SingleSchema(MessageResource);
export const MessageList = ListSchema(MessageResource);

export const MessageListQuery = Type.Object(
  {
    ...PageQuery,
    siteVisitId: Type.Optional(
      Text(MESSAGE_LIMITS.siteVisitId, {
        description:
          "Only the messages of this visit (its id, visit_ prefix), oldest first. A visit that is not one of yours lists nothing. A cursor pages only the list it came from: the same visit's, or the unfiltered list's.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type MessageListQueryValue = Static<typeof MessageListQuery>;

export const FileAttachmentUpload = SingleSchema(
  Type.Object(
    { messageId: Type.String({ description: "The message's id (msg_ prefix)." }), fileAttachment: FileObject },
    { additionalProperties: false, title: 'Message-attachment upload response' },
  ),
);

// ---------------------------------------------------------------------------------------------
// Operator API (GET /admin/v1/site-visits/{visitId}/messages, GET /admin/v1/messages/{messageId}/file-attachment)

/** A message as the operator sees it: the client's representation, its attachment's url the operator's download. */
export const OperatorMessageAttributes = Type.Object(
  {
    ...MessageAttributes.properties,
    fileAttachment: Type.Union([FileObject, Type.Null()], {
      description:
        "The attachment; null before the first upload. Its url is the operator API's download (GET /admin/v1/messages/{messageId}/file-attachment), which the operator token opens.",
    }),
  },
  { additionalProperties: false },
);
export type OperatorMessageAttributesValue = Static<typeof OperatorMessageAttributes>;

export const OperatorMessageResource = ResourceSchema('messages', OperatorMessageAttributes, {
  idPrefix: 'msg_',
  title: 'Message (operator view)',
});

/** The size of an operator's page of messages (a visit's, the inbox): the client API's largest page at most. */
export const OperatorMessageLimit = Type.Optional(
  Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'At most this many messages.' }),
);

/** The operator's lists are pages of `limit` rows, the next one `after` the last row's id (as deliveries are). */
export const OperatorMessageListQuery = Type.Object(
  {
    limit: OperatorMessageLimit,
    after: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          "A message id: only the visit's messages after it, oldest first (the next page: the last id of the page before). 422 when no message of this visit has this id.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type OperatorMessageListQueryValue = Static<typeof OperatorMessageListQuery>;

export const OperatorMessageParams = Type.Object(
  { messageId: Type.String({ maxLength: 100, description: "The message's id (msg_ prefix)." }) },
  { additionalProperties: false },
);
