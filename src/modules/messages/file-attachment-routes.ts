/** Uploading and downloading a message's file attachment (versioned; the routes are files/routes.ts'). */
import type { AppContext } from '../../app-context.js';
import type { Api } from '../../http/types.js';
import { registerFileRoutes } from '../files/routes.js';
import { toFileObject } from '../files/schemas.js';
import { FILE_ATTACHMENT_MEDIA_TYPES, fileAttachmentOwner } from './file-attachment.js';
import { FileAttachmentUpload } from './schemas.js';
import { fileAttachmentUrl } from './service.js';

export function registerFileAttachmentRoutes(app: Api, ctx: AppContext): Promise<void> {
  const baseUrl = ctx.config.publicBaseUrl;
  return registerFileRoutes(app, ctx, {
    path: '/api/v1/messages/:id/file-attachment',
    tags: ['Messages'],
    owner: fileAttachmentOwner,
    scopes: { read: 'site-visits:read', write: 'site-visits:write' },
    mediaTypes: FILE_ATTACHMENT_MEDIA_TYPES,
    download: {
      operationId: 'downloadFileAttachment',
      summary: 'Download the file attachment',
      description:
        'The latest version, as the type detected at upload (application/pdf, image/png or image/jpeg), with Content-Disposition naming the file. 404 before the first upload.',
      response: 'The latest version of the attachment.',
    },
    upload: {
      operationId: 'uploadFileAttachment',
      summary: 'Upload a file attachment',
      description:
        'multipart/form-data with one part: the file in the field "file", a PDF, PNG or JPEG of at most 10 MiB (the content decides the type). Every upload adds a version (at most 100) and adds 1 to the message\'s version. Not idempotent: after an uncertain result, read the message before uploading again.',
      file: 'The attachment: a PDF, PNG or JPEG of at most 10 MiB (10,485,760 bytes); its bytes decide its type.',
      unsupported: 'Not multipart/form-data, or the file is not a PDF, PNG or JPEG.',
      response: FileAttachmentUpload,
      body: (messageId, versions) => ({
        data: { messageId, fileAttachment: toFileObject(fileAttachmentUrl(baseUrl, messageId), versions)! },
      }),
    },
  });
}
