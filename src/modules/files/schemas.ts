/** The file object of SPEC's Return label (also a message's fileAttachment): a download URL and the versions. */
import { type Static, Type } from 'typebox';
import type { ListedFileVersion } from '../../db/schema.js';
import { isoTime } from '../../http/envelope.js';
import { DateTime, UnprocessableForm } from '../../http/schemas.js';
import { MAX_FILE_VERSIONS } from './limits.js';

export const FileVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: '1 for the first upload, then 2, 3, …' }),
    fileName: Type.String({
      description:
        "The uploaded file name made safe: no path, no control or bidirectional characters, and ending in the extension of the detected type (`poly.html` uploaded as a PDF is `poly.pdf`). The download is served under this name. Versions uploaded before names were made so keep their name here; their download gets the detected type's extension.",
    }),
    contentType: Type.String({
      description: "The type detected from the file's content.",
      examples: ['application/pdf'],
    }),
    sizeBytes: Type.Integer({ minimum: 1 }),
    uploadedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const FileObject = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      description: 'Absolute address of the download endpoint; it serves the latest version.',
    }),
    versions: Type.Array(FileVersion, {
      description: `Every uploaded version (at most ${MAX_FILE_VERSIONS}), oldest first.`,
    }),
  },
  { additionalProperties: false },
);
export type FileObjectValue = Static<typeof FileObject>;

/** Response headers of a download (the latest version of an owner's file). */
export const DownloadHeaders = Type.Object({
  'content-disposition': Type.String({
    description:
      "attachment, with the safe file name of the latest version (RFC 6266): `filename` in ASCII, and `filename*=UTF-8''…` (RFC 8187) with the exact name when it is not ASCII.",
  }),
  'content-length': Type.String({ description: 'Size of the file in bytes.' }),
});

/** The file object of an owner, or null when nothing was uploaded yet. */
export function toFileObject(url: string, versions: readonly ListedFileVersion[]): FileObjectValue | null {
  if (versions.length === 0) return null;
  return {
    url,
    versions: versions.map((row) => ({
      version: row.version,
      fileName: row.file_name,
      contentType: row.content_type,
      sizeBytes: row.size_bytes,
      uploadedAt: isoTime(row.uploaded_at),
    })),
  };
}

/**
 * The 422 storage-limit-reached problem, with the limit and what the tenant's files hold. A shared schema
 * (registered by the first file routes) so that the OpenAPI document shows it beside the validation form.
 */
export const STORAGE_LIMIT_PROBLEM_ID = 'StorageLimitProblem';
export const StorageLimitProblem = UnprocessableForm(
  'storage-limit-reached',
  {
    storageLimitBytes: Type.Integer({
      minimum: 1,
      description:
        'How much your files may hold in all, every version counted (10 GiB unless the operator set another limit).',
    }),
    storageUsedBytes: Type.Integer({ minimum: 0, description: 'How much they hold now.' }),
  },
  {
    $id: STORAGE_LIMIT_PROBLEM_ID,
    title: 'Storage limit problem (422)',
    description:
      'The upload would take your files past the storage limit (nothing of it is kept). Versions cannot be deleted: ask the operator to raise the limit.',
  },
);
