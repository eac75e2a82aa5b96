/** Upload limits (SPEC Limits; DECISIONS Uploads). */

/** 10 MB means 10 MiB of file content: a file of exactly this size is accepted, one byte more is 413. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** Room for the multipart framing (boundaries, part headers) around the file. */
export const MULTIPART_FRAMING_BYTES = 64 * 1024;

/** A request body larger than this cannot hold an acceptable upload: refused before it is read. */
export const MAX_UPLOAD_REQUEST_BYTES = MAX_UPLOAD_BYTES + MULTIPART_FRAMING_BYTES;
