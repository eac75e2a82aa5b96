/** Uploading and downloading a message's file attachment (SPEC: Uploads; Message fileAttachment). */
import type { AppContext } from '../../app-context.js';
import { BinaryFile, BinaryResponse, MultipartBody } from '../../http/media.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { DownloadHeaders, toFileObject } from '../files/schemas.js';
import { acceptUpload, sendLatestFile } from '../files/service.js';
import { registerUploadScope } from '../files/upload-scope.js';
import { FILE_ATTACHMENT_MEDIA_TYPES, fileAttachmentOwner } from './file-attachment.js';
import { FileAttachmentUpload } from './schemas.js';
import { fileAttachmentUrl } from './service.js';

const tags = ['Messages'];

export async function registerFileAttachmentRoutes(app: Api, ctx: AppContext): Promise<void> {
  const deps = { db: ctx.db, files: ctx.files, clock: ctx.clock };
  const baseUrl = ctx.config.publicBaseUrl;

  app.get(
    '/api/v1/messages/:id/file-attachment',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'downloadFileAttachment',
        summary: 'Download the file attachment',
        description:
          'The latest version, as the type detected at upload (application/pdf, image/png or image/jpeg), with Content-Disposition naming the file. 404 before the first upload.',
        tags,
        params: IdParams,
        response: {
          200: BinaryResponse(FILE_ATTACHMENT_MEDIA_TYPES, 'The latest version of the attachment.', DownloadHeaders),
          ...problemResponses([401, 403, 404, 429]),
        },
      },
    },
    async (request, reply) => sendLatestFile(deps, request, reply, fileAttachmentOwner, request.params.id),
  );

  await registerUploadScope(app, (scope) => {
    scope.post(
      '/api/v1/messages/:id/file-attachment',
      {
        config: { scope: 'site-visits:write' },
        schema: {
          operationId: 'uploadFileAttachment',
          summary: 'Upload a file attachment',
          description:
            'multipart/form-data with one part: the file in the field "file", a PDF, PNG or JPEG of at most 10 MiB (the content decides the type). Every upload adds a version and adds 1 to the message\'s version. Not idempotent: after an uncertain result, read the message before uploading again.',
          tags,
          params: IdParams,
          body: MultipartBody(
            {
              file: BinaryFile({
                description:
                  'The attachment: a PDF, PNG or JPEG of at most 10 MiB (10,485,760 bytes); its bytes decide its type.',
              }),
            },
            { encoding: { file: FILE_ATTACHMENT_MEDIA_TYPES.join(', ') } },
          ),
          response: {
            201: FileAttachmentUpload,
            ...problemResponses([401, 403, 404, 413, 415, 422, 429], {
              413: 'The file is larger than 10 MiB (10,485,760 bytes).',
              415: 'Not multipart/form-data, or the file is not a PDF, PNG or JPEG.',
              422: 'No file in the field "file", an empty file, more than one part, or a malformed multipart body.',
            }),
          },
        },
      },
      async (request, reply) => {
        const messageId = request.params.id;
        const versions = await acceptUpload(deps, request, fileAttachmentOwner, messageId);
        return reply.code(201).send({
          data: { messageId, fileAttachment: toFileObject(fileAttachmentUrl(baseUrl, messageId), versions)! },
        });
      },
    );
  });
}
