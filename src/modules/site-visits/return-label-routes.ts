/** Uploading and downloading a visit's return label (SPEC: Uploads; Return label). */
import type { AppContext } from '../../app-context.js';
import { BinaryFile, BinaryResponse, MultipartBody } from '../../http/media.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { DownloadHeaders, toFileObject } from '../files/schemas.js';
import { acceptUpload, sendLatestFile } from '../files/service.js';
import { registerUploadScope } from '../files/upload-scope.js';
import { returnLabelUrl } from './representation.js';
import { returnLabelOwner } from './return-label.js';
import { ReturnLabelUpload } from './schemas.js';

const tags = ['Site visits'];

export async function registerReturnLabelRoutes(app: Api, ctx: AppContext): Promise<void> {
  const deps = { db: ctx.db, files: ctx.files, clock: ctx.clock };
  const baseUrl = ctx.config.publicBaseUrl;

  app.get(
    '/api/v1/site-visits/:id/return-label',
    {
      config: { scope: 'site-visits:read' },
      schema: {
        operationId: 'downloadReturnLabel',
        summary: 'Download the return label',
        description:
          'The latest version, as application/pdf, with Content-Disposition naming the file. 404 before the first upload.',
        tags,
        params: IdParams,
        response: {
          200: BinaryResponse(['application/pdf'], 'The latest version of the return label.', DownloadHeaders),
          ...problemResponses([401, 403, 404, 429]),
        },
      },
    },
    async (request, reply) => sendLatestFile(deps, request, reply, returnLabelOwner, request.params.id),
  );

  await registerUploadScope(app, (scope) => {
    scope.post(
      '/api/v1/site-visits/:id/return-label',
      {
        config: { scope: 'site-visits:write' },
        schema: {
          operationId: 'uploadReturnLabel',
          summary: 'Upload a return label',
          description:
            'multipart/form-data with one part: the PDF in the field "file" (at most 10 MiB; the content decides the type). Every upload adds a version and adds 1 to the visit\'s version. Not idempotent: after an uncertain result, read the visit before uploading again.',
          tags,
          params: IdParams,
          body: MultipartBody(
            {
              file: BinaryFile({
                description: 'The return label: a PDF of at most 10 MiB (10,485,760 bytes); its bytes decide its type.',
              }),
            },
            { encoding: { file: 'application/pdf' } },
          ),
          response: {
            201: ReturnLabelUpload,
            ...problemResponses([401, 403, 404, 413, 415, 422, 429], {
              413: 'The file is larger than 10 MiB (10,485,760 bytes).',
              415: 'Not multipart/form-data, or the file is not a PDF.',
              422: 'No file in the field "file", an empty file, more than one part, or a malformed multipart body.',
            }),
          },
        },
      },
      async (request, reply) => {
        const visitId = request.params.id;
        const versions = await acceptUpload(deps, request, returnLabelOwner, visitId);
        return reply.code(201).send({
          data: { siteVisitId: visitId, returnLabel: toFileObject(returnLabelUrl(baseUrl, visitId), versions)! },
        });
      },
    );
  });
}
