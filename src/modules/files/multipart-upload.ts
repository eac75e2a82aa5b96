/**
 * Reads an upload's multipart body: exactly one part, a file in the form field `file`, streamed through
 * the content checks into the file store. Any other shape is a 422 naming `file`. On every failure the
 * partly stored blob is removed and the rest of the request body is read and discarded, so that the
 * client can finish sending and receive the answer on a healthy connection.
 */
import type { IncomingMessage } from 'node:http';
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Problem, validationProblem } from '../../http/problem.js';
import { type AcceptedFileType, checkedContent, tooLarge } from './content-check.js';
import { formFileName, safeFileName } from './file-names.js';
import { MAX_UPLOAD_BYTES, MAX_UPLOAD_REQUEST_BYTES } from './limits.js';
import type { FileStore, StoredBlob } from './store.js';

export const FILE_FIELD = 'file';

export interface UploadRules {
  /** The types accepted, judged from the content. */
  accepted: readonly AcceptedFileType[];
  /** The stem of the stored name when the client sends none usable (the detected type adds the extension). */
  defaultBaseName: string;
}

export interface ReceivedFile extends StoredBlob {
  fileName: string;
  contentType: string;
}

/** The request body was not a complete, well-formed multipart form. */
function malformed(): Problem {
  return validationProblem(
    { [FILE_FIELD]: ['could not be read: the multipart/form-data body is malformed or incomplete'] },
    'The multipart/form-data body is malformed or incomplete.',
  );
}

/** Maps what the multipart parser throws (busboy and plugin errors) to a problem. */
function parserProblem(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(MAX_UPLOAD_BYTES);
  return malformed();
}

async function* parserBytes(file: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    yield* file;
  } catch (error) {
    throw parserProblem(error);
  }
}

function unexpectedPart(part: Multipart, fileSeen: boolean): Problem {
  if (part.fieldname === FILE_FIELD && part.type === 'file') {
    return validationProblem({ [FILE_FIELD]: ['must be sent once; the form carries more than one file'] });
  }
  if (part.fieldname === FILE_FIELD) {
    return validationProblem({ [FILE_FIELD]: ['must be a file part (with a filename), not a plain form value'] });
  }
  const name = part.fieldname || '(unnamed part)';
  return validationProblem({
    [FILE_FIELD]: [fileSeen ? 'must be the only part of the form' : 'is required as the only part of the form'],
    [name]: ['is not a known field'],
  });
}

/**
 * Reads and discards the rest of a request body. Beyond `budget` bytes the connection is closed instead:
 * a client streaming without end gets no answer rather than unbounded work.
 */
function discardRestOfBody(raw: IncomingMessage, budget: number): Promise<void> {
  if (raw.complete || raw.destroyed || raw.readableEnded) return Promise.resolve();
  raw.unpipe();
  return new Promise((resolve) => {
    let seen = 0;
    const finish = () => {
      raw.off('data', count);
      raw.off('end', finish);
      raw.off('close', finish);
      raw.off('error', finish);
      resolve();
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > budget) {
        raw.destroy();
        finish();
      }
    };
    raw.on('data', count);
    raw.once('end', finish);
    raw.once('close', finish);
    raw.once('error', finish);
    raw.resume();
  });
}

/**
 * Streams the request's one file into the store and returns what was stored. Throws 413, 415 or 422 (the
 * problems of SPEC's Uploads rules) after removing whatever was stored and reading the body to its end.
 */
export async function receiveFile(
  request: FastifyRequest,
  store: FileStore,
  tenantId: string,
  rules: UploadRules,
): Promise<ReceivedFile> {
  const contentRules = { accepted: rules.accepted, maxBytes: MAX_UPLOAD_BYTES };
  let received: ReceivedFile | undefined;
  try {
    const parts = request.parts()[Symbol.asyncIterator]();
    for (;;) {
      const next = await parts.next().catch((error: unknown) => {
        throw parserProblem(error);
      });
      if (next.done) break;
      const part = next.value;
      if (received !== undefined || part.type !== 'file' || part.fieldname !== FILE_FIELD)
        throw unexpectedPart(part, received !== undefined);
      const found: { type?: AcceptedFileType } = {};
      const content = checkedContent(parserBytes(part.file), contentRules, () => part.file.truncated, found);
      const blob = await store.put(tenantId, content);
      received = {
        ...blob,
        contentType: found.type!.mime,
        fileName: safeFileName(formFileName(part.filename), found.type!.mime, rules.defaultBaseName),
      };
    }
    if (received === undefined)
      throw validationProblem({ [FILE_FIELD]: ['is required: send the file as the form field "file"'] });
    return received;
  } catch (error) {
    if (received !== undefined) await store.delete(tenantId, received.blobId).catch(() => undefined);
    await discardRestOfBody(request.raw, MAX_UPLOAD_REQUEST_BYTES);
    throw error;
  }
}
