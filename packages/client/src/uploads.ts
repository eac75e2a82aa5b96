/** The multipart body of an upload (the field `file`, which upload endpoints read) from a path, a Buffer or a Blob. */
import { openAsBlob } from 'node:fs';
import path from 'node:path';

export type FileSource = string | Uint8Array | Blob;

export interface UploadOptions {
  /** The part's file name; default: the path's base name, else `fallbackName`. */
  fileName?: string;
  /** The declared type; the service judges a file by its bytes, not by this. */
  contentType?: string;
}

export async function uploadForm(
  source: FileSource,
  fallbackName: string,
  options: UploadOptions = {},
): Promise<FormData> {
  const type =
    options.contentType ?? guessType(typeof source === 'string' ? source : (options.fileName ?? fallbackName));
  let blob: Blob;
  let name = options.fileName ?? fallbackName;
  if (typeof source === 'string') {
    blob = await openAsBlob(source, { type });
    name = options.fileName ?? path.basename(source);
  } else if (source instanceof Blob) {
    blob = options.contentType ? new Blob([source], { type }) : source;
  } else {
    blob = new Blob([blobBytes(source)], { type });
  }
  const form = new FormData();
  form.append('file', blob, name);
  return form;
}

/**
 * The bytes as a BlobPart. The DOM lib's BlobPart takes only views of a plain ArrayBuffer (a view of a
 * SharedArrayBuffer may change while the Blob is read); a Buffer or Uint8Array is one of those unless it
 * views shared memory, which is copied.
 */
function blobBytes(source: Uint8Array): Uint8Array<ArrayBuffer> {
  return source.buffer instanceof ArrayBuffer ? (source as Uint8Array<ArrayBuffer>) : new Uint8Array(source);
}

const TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
};

function guessType(name: string): string {
  return TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
}
