/**
 * Hand-built multipart/form-data bodies, so that tests control every byte (wrong field names, extra
 * parts, truncated bodies), and file contents of known types and sizes.
 */
import { sql } from 'kysely';
import { request as httpRequest } from 'node:http';
import type { TestApp } from './app.js';
import { createVisit, type VisitTenant } from './visits.js';

export interface FormPart {
  name: string;
  /** Present for a file part. */
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

export const BOUNDARY = '----site-services-test-boundary-7MA4YWxkTrZu0gW';

export function multipartBody(parts: FormPart[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const headers = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.contentType ? `Content-Type: ${part.contentType}\r\n` : ''}\r\n`;
    chunks.push(
      Buffer.from(headers, 'utf8'),
      Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data, 'utf8'),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export const MULTIPART_CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** One part with exactly these header lines, for parts that `multipartBody` would not write. */
export function rawPart(headerLines: string[], data: Buffer | string, boundary = BOUNDARY): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\n${headerLines.map((line) => `${line}\r\n`).join('')}\r\n`, 'utf8'),
    Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8'),
    Buffer.from('\r\n'),
  ]);
}

/** The closing delimiter of a form. */
export function closingDelimiter(boundary = BOUNDARY): Buffer {
  return Buffer.from(`--${boundary}--\r\n`);
}

/** Uploads `body` as the return label of a new visit of the tenant. */
export async function uploadReturnLabel(
  t: TestApp,
  v: VisitTenant,
  body: Buffer,
  contentType = MULTIPART_CONTENT_TYPE,
) {
  const visit = await createVisit(t, v);
  return t.http.post(`/api/v1/site-visits/${visit.id}/return-label`, {
    token: v.token,
    body,
    headers: { 'content-type': contentType },
  });
}

/** The tenant's stored blobs: a refused upload must leave none behind. */
export async function storedBlobCount(t: TestApp, tenantId: string): Promise<number> {
  const row = await t.database.db
    .selectFrom('file_blobs')
    .select(({ fn }) => fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Versions 2 to `upTo` of each of the tenant's files (of `ownerType` only, when given), copies of version 1 (its
 * blob, name and size): what so many uploads would leave, made in one statement.
 */
export async function repeatFileVersions(t: TestApp, tenantId: string, upTo: number, ownerType?: string) {
  await sql`insert into file_versions (tenant_id, owner_type, owner_id, version, blob_id, file_name, content_type,
      size_bytes, uploaded_at)
    select f.tenant_id, f.owner_type, f.owner_id, n, f.blob_id, f.file_name, f.content_type, f.size_bytes, f.uploaded_at
    from file_versions f, generate_series(2, ${upTo}::int) n
    where f.tenant_id = ${tenantId} and f.version = 1 and (${ownerType ?? null}::text is null or f.owner_type = ${ownerType ?? null})`.execute(
    t.database.db,
  );
}

/** A form with one file part in the field `file`. */
export function fileForm(data: Buffer, filename = 'label.pdf', contentType = 'application/pdf'): Buffer {
  return multipartBody([{ name: 'file', filename, contentType, data }]);
}

/** A PDF-looking file of exactly `size` bytes (at least 16). */
export function pdfBytes(size = 2048): Buffer {
  const head = Buffer.from('%PDF-1.7\n');
  const tail = Buffer.from('\n%%EOF\n');
  const buffer = Buffer.alloc(size, 0x20);
  head.copy(buffer, 0);
  tail.copy(buffer, size - tail.length);
  return buffer;
}

export function pngBytes(size = 2048): Buffer {
  const buffer = Buffer.alloc(size, 0);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]).copy(
    buffer,
    0,
  );
  return buffer;
}

export function jpegBytes(size = 2048): Buffer {
  const buffer = Buffer.alloc(size, 0);
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00]).copy(buffer, 0);
  return buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Sends request headers and at most `send` bytes of body over a fresh connection, then waits for the
 * answer: for requests whose declared length is never sent.
 */
export function rawRequest(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<RawResponse> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.write(body);
  });
}
