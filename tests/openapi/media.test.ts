/** The helpers for uploads and downloads (src/http/media.ts), through a route of their own. */
import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOpenApiDocument } from '../../src/http/openapi.js';
import { BinaryFile, BinaryResponse, MultipartBody } from '../../src/http/media.js';
import { problemResponses } from '../../src/http/schemas.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
const PDF = Buffer.from('%PDF-1.4\n%test\n');

beforeAll(async () => {
  t = await startTestApp({
    configure: async (app) => {
      await app.register(async (scope) => {
        await scope.register(multipart, { limits: { fileSize: 1024 } });
        scope.post(
          '/api/v1/test-files',
          {
            config: { scope: 'site-visits:write' },
            schema: {
              operationId: 'uploadTestFile',
              summary: 'Upload a test file',
              tags: ['Test'],
              body: MultipartBody(
                { file: BinaryFile({ description: 'A PDF.' }) },
                { encoding: { file: 'application/pdf' } },
              ),
              response: {
                201: Type.Object({ size: Type.Integer() }, { additionalProperties: false }),
                ...problemResponses([404]),
              },
            },
          },
          async (request, reply) => {
            const file = await request.file();
            return reply.code(201).send({ size: (await file!.toBuffer()).length });
          },
        );
        scope.get(
          '/api/v1/test-files/latest',
          {
            config: { scope: 'site-visits:read' },
            schema: {
              operationId: 'downloadTestFile',
              summary: 'Download the test file',
              tags: ['Test'],
              response: {
                200: BinaryResponse(
                  ['application/pdf', 'image/png'],
                  'The file.',
                  Type.Object({ etag: Type.String() }),
                ),
              },
            },
          },
          async (_request, reply) => reply.type('application/pdf').header('etag', '"1"').send(PDF),
        );
      });
    },
  });
  token = (await tenantWithToken(t)).token;
});
afterAll(async () => t?.close());

describe('MultipartBody and BinaryResponse', () => {
  it('document a file upload and a binary download', () => {
    const doc = clientOpenApiDocument(t.app);
    const upload = doc.paths['/api/v1/test-files']!.post!;
    expect(upload.requestBody.content).toEqual({
      'multipart/form-data': {
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['file'],
          properties: { file: { type: 'string', format: 'binary', description: 'A PDF.' } },
        },
        encoding: { file: { contentType: 'application/pdf' } },
      },
    });
    // A multipart body is not JSON: no 400 for unparseable JSON, but 415 and 422.
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['201', '415', '422']));
    expect(upload.responses['400']).toBeUndefined();
    const download = doc.paths['/api/v1/test-files/latest']!.get!.responses['200'];
    expect(download.content).toEqual({
      'application/pdf': { schema: { type: 'string', format: 'binary' } },
      'image/png': { schema: { type: 'string', format: 'binary' } },
    });
    expect(download.headers.ETag).toMatchObject({ required: true });
  });

  it('leave the multipart body to its handler, and the contract check accepts both responses', async () => {
    const form = new FormData();
    form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'label.pdf');
    const uploaded = await t.http.post('/api/v1/test-files', { token, body: form });
    expect(uploaded.status).toBe(201);
    expect(uploaded.body).toEqual({ size: PDF.length });
    const downloaded = await t.http.get('/api/v1/test-files/latest', { token });
    expect(downloaded.status).toBe(200);
    expect(downloaded.contentType).toBe('application/pdf');
  });
});
