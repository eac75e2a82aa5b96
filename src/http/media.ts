/**
 * Schemas of bodies that are not JSON: multipart uploads and binary downloads. A route declares them in
 * its schema like any other body or response; the OpenAPI document then shows a file upload and a binary
 * download, and the contract check of the tests knows what to expect.
 *
 *   body: MultipartBody({ file: BinaryFile({ description: 'PDF, at most 10 MiB.' }) }, { encoding: { file: 'application/pdf' } }),
 *   response: { 200: BinaryResponse(['application/pdf'], 'The latest version of the return label.') }
 *
 * Fastify does not validate a multipart body (validation.ts skips it): the handler reads the parts from
 * the stream (`request.file()`) and checks them itself, so the schema is the contract, not a validator.
 */
import { type TObject, type TProperties, type TSchema, type TString, Type } from 'typebox';
import type { Api } from './types.js';
import { Problem } from './problem.js';

export const MULTIPART_FORM_DATA = 'multipart/form-data';

/** A file part of a multipart body (`format: binary`). */
export function BinaryFile(options: { description?: string } = {}): TString {
  return Type.String({ format: 'binary', ...options });
}

export interface MultipartBodySchema<P extends TProperties> {
  content: { [MULTIPART_FORM_DATA]: { schema: TObject<P>; encoding?: Record<string, { contentType: string }> } };
}

/**
 * A `multipart/form-data` request body with the given parts (all required unless wrapped in
 * Type.Optional; unknown parts are refused). `encoding` names the media types accepted per part, e.g.
 * `{ file: 'application/pdf, image/png, image/jpeg' }`.
 */
export function MultipartBody<P extends TProperties>(
  parts: P,
  options: { description?: string; encoding?: Record<string, string> } = {},
): MultipartBodySchema<P> {
  const schema = Type.Object(parts, {
    additionalProperties: false,
    ...(options.description ? { description: options.description } : {}),
  });
  const encoding = options.encoding
    ? Object.fromEntries(Object.entries(options.encoding).map(([part, contentType]) => [part, { contentType }]))
    : undefined;
  return { content: { [MULTIPART_FORM_DATA]: { schema, ...(encoding ? { encoding } : {}) } } };
}

/** The media types a route's body schema declares (`content`, for multipart and the token endpoint), else JSON. */
export function acceptedMediaTypes(bodySchema: unknown): string[] {
  const content = (bodySchema as { content?: Record<string, unknown> } | undefined)?.content;
  return content ? Object.keys(content) : ['application/json'];
}

export interface BinaryResponseSchema {
  description: string;
  content: Record<string, { schema: TString }>;
  headers?: TSchema;
}

/**
 * A response whose body is a file in one of `mediaTypes` (e.g. `['application/pdf', 'image/png']`).
 * `headers` is a TypeBox object of response headers, as on JSON responses.
 */
export function BinaryResponse(
  mediaTypes: readonly string[],
  description: string,
  headers?: TObject,
): BinaryResponseSchema {
  const content = Object.fromEntries(
    mediaTypes.map((mediaType) => [mediaType, { schema: Type.String({ format: 'binary' }) }]),
  );
  return { description, content, ...(headers ? { headers } : {}) };
}

/**
 * Request bodies are read as sent: no content coding is decoded. A body declaring one (gzip, br, ...) is
 * refused with 415 (RFC 9110 §8.4.1) instead of being stored or parsed as if it were not encoded.
 */
export function registerContentEncodingRefusal(app: Api): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const coding = request.headers['content-encoding'];
    if (coding === undefined || coding.trim().toLowerCase() === 'identity') return done();
    done(
      new Problem(
        'unsupported-media-type',
        `Content-Encoding ${JSON.stringify(coding.slice(0, 40))} is not supported: send the body uncompressed.`,
      ),
    );
  });
}
