/**
 * The operator's inbox (GET /admin/v1/messages): every tenant's messages in arrival order, each a summary that
 * says who wrote about which visit and how it begins; the visit's messages list (GET
 * /admin/v1/site-visits/{visitId}/messages) has the whole message.
 */
import { type Static, Type } from 'typebox';
import { DateTime, Nullable, StringEnum } from '../../http/schemas.js';
import { MESSAGE_TYPES, OperatorMessageLimit, URGENCIES } from './schemas.js';

/** The most of a message's text a summary carries, in characters (code points). */
export const PREVIEW_LENGTH = 200;

export const InboxMessage = Type.Object(
  {
    messageId: Type.String({ description: "The message's id (msg_ prefix)." }),
    version: Type.Integer({
      minimum: 1,
      description:
        "The message's version (the client API's), 1 more at each change of the client's: mark handled what was read by sending it (POST /admin/v1/messages/handled, `messages`).",
    }),
    tenantId: Type.String(),
    tenantName: Type.String({ description: "The tenant's name as it is now." }),
    siteVisitId: Type.String({ description: 'The visit the message is about (visit_ prefix).' }),
    clientTicketNumber: Nullable(
      Type.String({ description: "The visit's ticket number, as the client gave it; null when it gave none." }),
    ),
    sender: Type.String({
      description:
        'Who sent the message: its recordOwner, as stored ("Client API" for every message the client API created).',
    }),
    type: Nullable(StringEnum(MESSAGE_TYPES)),
    urgency: Nullable(StringEnum(URGENCIES)),
    createdAt: DateTime('When the message arrived.'),
    preview: Type.String({
      maxLength: PREVIEW_LENGTH,
      description: `The message's text, its first ${PREVIEW_LENGTH} characters (code points), as written: plain text, never markup.`,
    }),
    previewTruncated: Type.Boolean({ description: 'true when the text is longer than the preview.' }),
    hasFileAttachment: Type.Boolean({
      description: 'Whether the client uploaded an attachment (GET /admin/v1/messages/{messageId}/file-attachment).',
    }),
    handledAt: Nullable(
      DateTime(
        "When the operator marked the message handled (POST /admin/v1/messages/handled); null while it is not, and again after a client's change to it (a PATCH that changes a field, a new attachment version). One state for the whole operator, not per person or browser.",
      ),
    ),
  },
  { additionalProperties: false, title: 'Message summary (operator inbox)' },
);
export type InboxMessageValue = Static<typeof InboxMessage>;

/** One tenant's messages (an exact id; one that names no tenant has none), in the list and in the count. */
const TenantFilter = Type.Optional(Type.String({ maxLength: 100, description: "Only this tenant's messages." }));

/** Pages as the deliveries' list: `limit` rows in the chosen order, the next one `after` the last row's id. */
export const InboxQuery = Type.Object(
  {
    tenantId: TenantFilter,
    order: Type.Optional(
      StringEnum(['asc', 'desc'] as const, {
        description: 'By arrival: asc (oldest first, the default) or desc (newest first).',
      }),
    ),
    handled: Type.Optional(
      StringEnum(['true', 'false'] as const, {
        description: 'Only the handled messages (true) or only those not handled yet (false); both when absent.',
      }),
    ),
    limit: OperatorMessageLimit,
    after: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          'A message id: only the messages after it in this order (the next page: the last messageId of the page before, with the same filter and order). 422 when no message has this id.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type InboxQueryValue = Static<typeof InboxQuery>;

/** The most messages one request marks; the console sends a page of the inbox (50) at most. */
export const HANDLED_BATCH = 100;

/** A message's id (an inbox messageId) as the operator's requests name it. */
const MessageId = Type.String({ maxLength: 100 });

/** A message as the operator read it: its id and the version that was shown. */
export const SeenMessage = Type.Object(
  {
    messageId: MessageId,
    version: Type.Integer({ minimum: 1, description: "The version the operator read (the inbox summary's)." }),
  },
  { additionalProperties: false },
);

export const HandledBody = Type.Object(
  {
    messages: Type.Optional(
      Type.Array(SeenMessage, {
        minItems: 1,
        maxItems: HANDLED_BATCH,
        description: `The messages to mark, each at the version the operator read (inbox messageId and version), 1 to ${HANDLED_BATCH} distinct ids: one whose version has moved on (a client's change) is not marked and is listed in \`stale\`, the others are. 422 when one names no message or a version it never had: then none is marked. Send this or \`messageIds\`.`,
      }),
    ),
    messageIds: Type.Optional(
      Type.Array(MessageId, {
        minItems: 1,
        maxItems: HANDLED_BATCH,
        uniqueItems: true,
        description: `The messages to mark whatever their version (inbox messageIds, of any tenants), 1 to ${HANDLED_BATCH}. 422 when one names no message: then none is marked. Send this or \`messages\`; \`messages\` marks only what was read.`,
      }),
    ),
    handled: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'true (the default): handled now, unless already handled (then its time is kept); false: not handled again (back in the count).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type HandledBodyValue = Static<typeof HandledBody>;

export const HandledResult = Type.Object(
  {
    handled: Type.Boolean({ description: 'The state the messages are now in.' }),
    changed: Type.Integer({ minimum: 0, description: 'How many of them were in the other state before.' }),
    stale: Type.Array(
      Type.Object(
        {
          messageId: Type.String(),
          version: Type.Integer({ minimum: 1, description: "The message's version now." }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The messages of `messages` not marked because their version is not the one sent: a client changed them since (and the change made them not handled); read them again. Empty with `messageIds`.',
      },
    ),
  },
  { additionalProperties: false },
);
export type HandledResultValue = Static<typeof HandledResult>;

/** The count stops here: past it "more" says there are more (a bounded read however large the backlog). */
export const UNHANDLED_COUNT_LIMIT = 1000;

export const UnhandledCountQuery = Type.Object({ tenantId: TenantFilter }, { additionalProperties: false });
export type UnhandledCountQueryValue = Static<typeof UnhandledCountQuery>;

export const UnhandledCount = Type.Object(
  {
    unhandled: Type.Integer({
      minimum: 0,
      maximum: UNHANDLED_COUNT_LIMIT,
      description: `How many clients' messages (every tenant's, or the one tenant's asked for) are not handled, at most ${UNHANDLED_COUNT_LIMIT}.`,
    }),
    more: Type.Boolean({ description: `true: there are more than ${UNHANDLED_COUNT_LIMIT}.` }),
  },
  { additionalProperties: false, title: 'Unhandled messages (operator inbox)' },
);
export type UnhandledCountValue = Static<typeof UnhandledCount>;
