/** Uploading and downloading a visit's return label (a versioned PDF; the routes are files/routes.ts'). */
import type { AppContext } from '../../app-context.js';
import type { Api } from '../../http/types.js';
import { registerFileRoutes } from '../files/routes.js';
import { toFileObject } from '../files/schemas.js';
import { returnLabelUrl } from './representation.js';
import { returnLabelOwner } from './return-label.js';
import { ReturnLabelUpload } from './schemas.js';

export function registerReturnLabelRoutes(app: Api, ctx: AppContext): Promise<void> {
  const baseUrl = ctx.config.publicBaseUrl;
  return registerFileRoutes(app, ctx, {
    path: '/api/v1/site-visits/:id/return-label',
    tags: ['Site visits'],
    owner: returnLabelOwner,
    scopes: { read: 'site-visits:read', write: 'site-visits:write' },
    mediaTypes: ['application/pdf'],
    download: {
      operationId: 'downloadReturnLabel',
      summary: 'Download the return label',
      description:
        'The latest version, as application/pdf, with Content-Disposition naming the file. 404 before the first upload.',
      response: 'The latest version of the return label.',
    },
    upload: {
      operationId: 'uploadReturnLabel',
      summary: 'Upload a return label',
      description:
        'multipart/form-data with one part: the PDF in the field "file" (at most 10 MiB; the content decides the type). Every upload adds a version (at most 100) and adds 1 to the visit\'s version. Not idempotent: after an uncertain result, read the visit before uploading again.',
      file: 'The return label: a PDF of at most 10 MiB (10,485,760 bytes); its bytes decide its type.',
      unsupported: 'Not multipart/form-data, or the file is not a PDF.',
      response: ReturnLabelUpload,
      body: (visitId, versions) => ({
        data: { siteVisitId: visitId, returnLabel: toFileObject(returnLabelUrl(baseUrl, visitId), versions)! },
      }),
    },
  });
}
