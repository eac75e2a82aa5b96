/** Upload limits (SPEC Limits; DECISIONS Uploads). */

/** 10 MB means 10 MiB of file content: a file of exactly this size is accepted, one byte more is 413. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** Room for the multipart framing (boundaries, part headers) around the file. */
export const MULTIPART_FRAMING_BYTES = 64 * 1024;

/** A request body larger than this cannot hold an acceptable upload: refused before it is read. */
export const MAX_UPLOAD_REQUEST_BYTES = MAX_UPLOAD_BYTES + MULTIPART_FRAMING_BYTES;

/**
 * The multipart parser's limits (busboy's names). One file is accepted; the parser may see a second one
 * (or a stray field) so that it is reported by name. The rest bound what a malformed form can make the
 * parser hold. Going past any of them is answered with a 422 that names it (multipart-problems.ts).
 */
export const MULTIPART_LIMITS = {
  fileSize: MAX_UPLOAD_BYTES,
  /** File parts. */
  files: 2,
  /** Parts that are not files (plain form values). */
  fields: 4,
  /** Parts of any kind, those the parser skips included. */
  parts: 6,
  /** The longest plain form value read, in bytes; the rest is cut (and the field refused anyway). */
  fieldSize: 64 * 1024,
  /** Header fields read per part: Content-Disposition and Content-Type are all an upload needs. */
  headerPairs: 16,
  /** Bytes of a part's header block read (busboy's default, stated): a longer one is cut, not refused. */
  headerSize: 80 * 1024,
} as const;

/**
 * The most versions an owner's file may have. Every version is kept and listed in the owner's
 * representation (its lists' pages and every upload's answer too), so without a bound a few hundred bytes
 * uploaded again and again would make each read of the owner grow without end.
 */
export const MAX_FILE_VERSIONS = 100;
