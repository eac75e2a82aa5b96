/**
 * Upload routes live in a Fastify context of their own: the multipart parser is registered only there
 * (everywhere else multipart bodies stay 415), and each request is checked before its body is read:
 * not multipart/form-data is 415, a Content-Length that cannot hold an acceptable file is 413 (a body without
 * one is counted as it arrives: body-length.ts).
 */
import multipart from '@fastify/multipart';
import { discardRestOfBody } from '../../http/lingering-close.js';
import { Problem } from '../../http/problem.js';
import type { Api } from '../../http/types.js';
import { uploadBodyTooLong } from './body-length.js';
import { MAX_UPLOAD_REQUEST_BYTES, MULTIPART_LIMITS } from './limits.js';

const MULTIPART = /^multipart\/form-data\s*(;|$)/i;

export async function registerUploadScope(app: Api, register: (scope: Api) => void): Promise<void> {
  await app.register(async (instance) => {
    const scope = instance as unknown as Api;
    await scope.register(multipart, {
      throwFileSizeLimit: true,
      limits: MULTIPART_LIMITS,
    });
    // preParsing runs after authentication (onRequest) and before anything reads the body.
    scope.addHook('preParsing', async (request, _reply, payload) => {
      const contentType = request.headers['content-type'];
      if (typeof contentType !== 'string' || !MULTIPART.test(contentType)) {
        throw new Problem(
          'unsupported-media-type',
          'Uploads must be sent as multipart/form-data with the file in the form field "file".',
        );
      }
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > MAX_UPLOAD_REQUEST_BYTES) {
        // The body is not parsed, and the answer closes the connection. What the client sends until it reads
        // the answer is dropped, the connection closed only then (at most the bound, LINGER_MS): closing on
        // unread bytes reset the connection, and a client still writing lost the 413 with it.
        void discardRestOfBody(request, MAX_UPLOAD_REQUEST_BYTES);
        throw uploadBodyTooLong(declared);
      }
      return payload;
    });
    register(scope);
  });
}
