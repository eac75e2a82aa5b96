/**
 * Reads an upload's multipart body: exactly one part, a file in the form field `file`, streamed through
 * the content checks into the file store. Any other shape, a part the parser cannot read and a limit of
 * the parser gone past are each a 422 naming `file` that says which (multipart-problems.ts). On every
 * failure the partly stored blob is removed and the rest of the request body is read and discarded, so
 * that the client can finish sending and receive the answer on a healthy connection.
 */
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { discardRestOfBody } from '../../http/lingering-close.js';
import { UploadBodyLength, uploadBodyTooLong } from './body-length.js';
import { type AcceptedFileType, checkedContent } from './content-check.js';
import { formFileName, safeFileName } from './file-names.js';
import { MAX_UPLOAD_BYTES, MAX_UPLOAD_REQUEST_BYTES } from './limits.js';
import {
  endOfFormProblem,
  FILE_FIELD,
  type FormSoFar,
  parserProblem,
  type ReadPart,
  unexpectedPart,
  unreadableForm,
} from './multipart-problems.js';
import { PartHeaderWatch } from './part-headers.js';
import type { FileStore, StoredBlob } from './store.js';

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

/** Busboy's own rule (its default `isPartAFile`): a part with a filename, or declared as octet-stream. */
function isFilePart(contentType: string | undefined, fileName: string | undefined): boolean {
  return contentType === 'application/octet-stream' || fileName !== undefined;
}

async function* parserBytes(file: AsyncIterable<Buffer>, form: FormSoFar): AsyncGenerator<Buffer> {
  try {
    yield* file;
  } catch (error) {
    throw parserProblem(error, form);
  }
}

function readPart(part: Multipart): ReadPart {
  return {
    name: part.fieldname as string | undefined,
    isFile: part.type === 'file',
    valueTruncated: part.type === 'field' && part.valueTruncated,
  };
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
  const read: ReadPart[] = [];
  // Started before the parser, in the same tick: both see every chunk (part-headers.ts, body-length.ts).
  const length = new UploadBodyLength(request.raw);
  const form: FormSoFar = {
    headers: new PartHeaderWatch(request.raw, request.headers['content-type']),
    read,
    fileSeen: false,
  };
  let received: ReceivedFile | undefined;
  try {
    const parts = request
      .parts({
        isPartAFile: (name, contentType, fileName) => {
          const isFile = isFilePart(contentType, fileName);
          read.push({ name, isFile });
          return isFile;
        },
      })
      [Symbol.asyncIterator]();
    for (;;) {
      const next = await parts.next().catch((error: unknown) => {
        throw parserProblem(error, form);
      });
      // A part the parser skipped comes first: what it delivered after it may only look wrong for that.
      if (form.headers.unreadable !== undefined) throw unreadableForm(form.headers.unreadable);
      if (next.done) break;
      const part = next.value;
      if (received !== undefined || part.type !== 'file' || part.fieldname !== FILE_FIELD)
        throw unexpectedPart(readPart(part), received !== undefined);
      form.fileSeen = true;
      const found: { type?: AcceptedFileType } = {};
      const content = checkedContent(parserBytes(part.file, form), contentRules, () => part.file.truncated, found);
      const blob = await store.put(tenantId, content);
      received = {
        ...blob,
        contentType: found.type!.mime,
        fileName: safeFileName(formFileName(part.filename), found.type!.mime, rules.defaultBaseName),
      };
    }
    const problem = endOfFormProblem(form);
    if (problem !== undefined) throw problem;
    return received!;
  } catch (error) {
    if (received !== undefined) await store.delete(tenantId, received.blobId).catch(() => undefined);
    form.headers.stop();
    length.stop();
    if (length.exceeded) {
      // Past the bound, whatever failed meanwhile, 413 at once: the body may never end. What still comes is
      // read and dropped while the answer goes out, and after it when the connection closes (closing on
      // unread bytes would reset the connection, and with it the answer on its way), up to the bound once more.
      void discardRestOfBody(request, MAX_UPLOAD_REQUEST_BYTES);
      throw uploadBodyTooLong();
    }
    // The rest of the body is discarded unread.
    await discardRestOfBody(request, MAX_UPLOAD_REQUEST_BYTES);
    throw error;
  } finally {
    form.headers.stop();
    length.stop();
  }
}
