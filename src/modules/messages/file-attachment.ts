/** A message's attachment as a versioned file (SPEC: Uploads rule 2: PDF, PNG or JPEG). */
import type { FileOwner } from '../files/service.js';
import { touchMessage } from './repository.js';
import { FILE_ATTACHMENT_OWNER, messageExists } from './service.js';

export const fileAttachmentOwner: FileOwner = {
  ownerType: FILE_ATTACHMENT_OWNER,
  ownerName: 'Message',
  fileName: 'File attachment',
  rules: {
    accepted: [{ mime: 'application/pdf' }, { mime: 'image/png' }, { mime: 'image/jpeg' }],
    defaultBaseName: 'attachment',
  },
  exists: messageExists,
  // A new version changes the message's fileAttachment attribute: version + 1 and updatedAt, like any change.
  touch: touchMessage,
};

/** The media types an attachment is stored and served as. */
export const FILE_ATTACHMENT_MEDIA_TYPES = fileAttachmentOwner.rules.accepted.map((type) => type.mime);
