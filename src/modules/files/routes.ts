/**
 * The download and upload routes of a resource's versioned file (a visit's return label, a message's
 * attachment): one registration, described by the owning module.
 */
import type { TSchema } from 'typebox';
import type { AppContext } from '../../app-context.js';
import type { ListedFileVersion } from '../../db/schema.js';
import { BinaryFile, BinaryResponse, MultipartBody } from '../../http/media.js';
import { IdParams, NoQuery, problemResponses } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { MAX_FILE_VERSIONS, MULTIPART_LIMITS } from './limits.js';
import { DownloadHeaders, STORAGE_LIMIT_PROBLEM_ID, StorageLimitProblem } from './schemas.js';
import { acceptUpload, type FileOwner, sendLatestFile } from './service.js';
import { registerUploadScope } from './upload-scope.js';

const { headerPairs, parts, files, fields, fieldSize } = MULTIPART_LIMITS;

/** What an upload's 422 can be (multipart-problems.ts): `detail` and `errors.file` say which. */
const UNPROCESSABLE_UPLOAD =
  'No file in the field "file", an empty file, or a form of more than one part; a part the parser cannot read ' +
  `(more than ${headerPairs} header fields, no Content-Disposition form-data with a name); more parts (${parts}), ` +
  `files (${files}) or plain fields (${fields}) than the parser reads, or a plain value over ${fieldSize} bytes; ` +
  'or a body that is not a complete form (no boundary parameter, no closing delimiter); or the file already has ' +
  `${MAX_FILE_VERSIONS} versions, the most it may have (file-version-limit-reached); or the tenant's files would hold more ` +
  'than its storage limit (storage-limit-reached, with storageLimitBytes and storageUsedBytes). `detail` and `errors.file` say which.';

export interface FileRoutes {
  /** The file's path below its resource, e.g. `/api/v1/site-visits/:id/return-label`. */
  path: string;
  tags: string[];
  owner: FileOwner;
  /** The owner resource's scopes: reading the file needs the first, uploading the second. */
  scopes: { read: string; write: string };
  /** The types a version can have (the content decides). */
  mediaTypes: readonly string[];
  download: { operationId: string; summary: string; description: string; response: string };
  upload: {
    operationId: string;
    summary: string;
    description: string;
    /** What the `file` part must be. */
    file: string;
    /** The 415 answer's condition. */
    unsupported: string;
    response: TSchema;
    /** The 201 body, from the owner's id and every version after the upload. */
    body: (ownerId: string, versions: ListedFileVersion[]) => unknown;
  };
}

export async function registerFileRoutes(app: Api, ctx: AppContext, routes: FileRoutes): Promise<void> {
  const deps = { db: ctx.db, files: ctx.files, clock: ctx.clock };
  const { owner, download, upload } = routes;
  // Every file route's upload can answer it; the document names the shape once.
  if (!app.getSchema(STORAGE_LIMIT_PROBLEM_ID)) app.addSchema(StorageLimitProblem);

  app.get(
    routes.path,
    {
      config: { scope: routes.scopes.read },
      schema: {
        operationId: download.operationId,
        summary: download.summary,
        description: download.description,
        tags: routes.tags,
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: BinaryResponse([...routes.mediaTypes], download.response, DownloadHeaders),
          ...problemResponses([401, 403, 404, 429]),
        },
      },
    },
    async (request, reply) => sendLatestFile(deps, request, reply, owner, request.params.id),
  );

  await registerUploadScope(app, (scope) => {
    scope.post(
      routes.path,
      {
        config: { scope: routes.scopes.write },
        schema: {
          operationId: upload.operationId,
          summary: upload.summary,
          description: upload.description,
          tags: routes.tags,
          params: IdParams,
          body: MultipartBody(
            { file: BinaryFile({ description: upload.file }) },
            { encoding: { file: routes.mediaTypes.join(', ') } },
          ),
          response: {
            201: upload.response,
            ...problemResponses(
              [401, 403, 404, 413, 415, 422, 429],
              {
                413: 'The file is larger than 10 MiB (10,485,760 bytes).',
                415: upload.unsupported,
                422: UNPROCESSABLE_UPLOAD,
              },
              { 422: [STORAGE_LIMIT_PROBLEM_ID] },
              { 422: ['file-version-limit-reached', 'storage-limit-reached'] },
            ),
          },
        },
      },
      async (request, reply) => {
        const versions = await acceptUpload(deps, request, owner, request.params.id);
        return reply.code(201).send(upload.body(request.params.id, versions));
      },
    );
  });
}
