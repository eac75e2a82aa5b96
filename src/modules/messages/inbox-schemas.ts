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
  },
  { additionalProperties: false, title: 'Message summary (operator inbox)' },
);
export type InboxMessageValue = Static<typeof InboxMessage>;

/** Pages as the deliveries' list: `limit` rows in the chosen order, the next one `after` the last row's id. */
export const InboxQuery = Type.Object(
  {
    tenantId: Type.Optional(Type.String({ maxLength: 100, description: "Only this tenant's messages." })),
    order: Type.Optional(
      StringEnum(['asc', 'desc'] as const, {
        description: 'By arrival: asc (oldest first, the default) or desc (newest first).',
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
