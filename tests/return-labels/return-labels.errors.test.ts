import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  BOUNDARY,
  fileForm,
  jpegBytes,
  MULTIPART_CONTENT_TYPE,
  multipartBody,
  pdfBytes,
  pngBytes,
  rawRequest,
  storedBlobCount,
} from '../helpers/multipart.js';
import { createVisit, visitTenant, type VisitTenant } from '../helpers/visits.js';

const MIB_10 = 10 * 1024 * 1024;

let t: TestApp;
let v: VisitTenant;
let visitId: string;
beforeAll(async () => {
  t = await startTestApp();
  v = await visitTenant(t);
  visitId = (await createVisit(t, v)).id;
});
afterAll(async () => t?.close());

function path(id = visitId) {
  return `/api/v1/site-visits/${id}/return-label`;
}

function upload(body: Buffer, contentType = MULTIPART_CONTENT_TYPE, id = visitId) {
  return t.http.post(path(id), { token: v.token, body, headers: { 'content-type': contentType } });
}

/** The tenant's stored blobs: a refused upload must leave none behind. */
const blobCount = () => storedBlobCount(t, v.tenantId);

async function versionCount(): Promise<number> {
  const read = await t.http.get(`/api/v1/site-visits/${visitId}`, { token: v.token });
  return read.body.data.attributes.returnLabel?.versions.length ?? 0;
}

function expectFileProblem(response: { status: number; body: any }, status: number, slug: string) {
  expect(response.status).toBe(status);
  expect(response.body.type).toMatch(new RegExp(`${slug}$`));
}

describe('size', () => {
  it('accepts a file of exactly 10 MiB (10,485,760 bytes)', async () => {
    const visit = await createVisit(t, v);
    const response = await upload(fileForm(pdfBytes(MIB_10)), MULTIPART_CONTENT_TYPE, visit.id);
    expect(response.status).toBe(201);
    expect(response.body.data.returnLabel.versions[0].sizeBytes).toBe(MIB_10);
  });

  it('refuses 10 MiB + 1 byte with 413, storing nothing', async () => {
    const before = await blobCount();
    expectFileProblem(await upload(fileForm(pdfBytes(MIB_10 + 1))), 413, 'payload-too-large');
    expect(await blobCount()).toBe(before);
    expect(await versionCount()).toBe(0);
  });

  it('refuses a Content-Length that cannot hold an acceptable file before reading the body, closing the connection', async () => {
    const response = await rawRequest(
      t.baseUrl,
      path(),
      {
        authorization: `Bearer ${v.token}`,
        'content-type': MULTIPART_CONTENT_TYPE,
        'content-length': String(MIB_10 + 64 * 1024 + 1),
      },
      Buffer.from(`--${BOUNDARY}\r\n`),
    );
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe('close');
    expect(JSON.parse(response.body).type).toMatch(/payload-too-large$/);
  });

  it('refuses an empty file with 422 naming file', async () => {
    const response = await upload(fileForm(Buffer.alloc(0)));
    expectFileProblem(response, 422, 'validation-error');
    expect(response.body.errors).toEqual({ file: ['must not be empty'] });
  });
});

describe('type (decided by the bytes)', () => {
  it.each([
    ['PNG named .pdf', pngBytes(), 'label.pdf', 'application/pdf'],
    ['JPEG declared as PDF', jpegBytes(), 'label.pdf', 'application/pdf'],
    [
      'plain text named .pdf',
      Buffer.from('This is not a PDF at all, only some text.\n'.repeat(200)),
      'label.pdf',
      'application/pdf',
    ],
    [
      'PNG with an embedded PDF (polyglot)',
      Buffer.concat([pngBytes(64), pdfBytes(2000)]),
      'label.pdf',
      'application/pdf',
    ],
    [
      'PDF header after 8 bytes of junk',
      Buffer.concat([Buffer.from('GARBAGE\n'), pdfBytes(2000)]),
      'label.pdf',
      'application/pdf',
    ],
    ['a tiny non-PDF file', Buffer.from('%PD'), 'label.pdf', 'application/pdf'],
    ['a large PNG', pngBytes(3 * 1024 * 1024), 'label.pdf', 'application/pdf'],
  ])('refuses %s with 415', async (_label, bytes, filename, declared) => {
    const before = await blobCount();
    const response = await upload(fileForm(bytes, filename, declared));
    expectFileProblem(response, 415, 'unsupported-media-type');
    expect(await blobCount()).toBe(before);
  });

  it('accepts a PDF that embeds image bytes after its header', async () => {
    const visit = await createVisit(t, v);
    const response = await upload(
      fileForm(Buffer.concat([pdfBytes(1000), pngBytes(500), jpegBytes(500)])),
      MULTIPART_CONTENT_TYPE,
      visit.id,
    );
    expect(response.status).toBe(201);
  });

  it.each([
    ['application/json', '{"file":"JVBERi0="}'],
    ['application/pdf', pdfBytes().toString('latin1')],
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'file=abc'],
  ])('refuses a %s body with 415', async (contentType, body) => {
    const response = await upload(Buffer.from(body, 'latin1'), contentType);
    expectFileProblem(response, 415, 'unsupported-media-type');
    expect(response.body.detail).toMatch(/multipart\/form-data/);
  });

  it('refuses a request without Content-Type with 415', async () => {
    const response = await t.http.post(path(), { token: v.token, body: pdfBytes() });
    expectFileProblem(response, 415, 'unsupported-media-type');
  });
});

describe('form shape (422 naming file)', () => {
  it.each([
    [
      'the wrong field name',
      multipartBody([{ name: 'upload', filename: 'label.pdf', contentType: 'application/pdf', data: pdfBytes() }]),
      ['file', 'upload'],
    ],
    ['no part at all', multipartBody([]), ['file']],
    [
      'two files',
      multipartBody([
        { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
        { name: 'file', filename: 'b.pdf', contentType: 'application/pdf', data: pdfBytes() },
      ]),
      ['file'],
    ],
    [
      'a second file under another name',
      multipartBody([
        { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
        { name: 'other', filename: 'b.pdf', contentType: 'application/pdf', data: pdfBytes() },
      ]),
      ['file', 'other'],
    ],
    [
      'an extra field after the file',
      multipartBody([
        { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
        { name: 'note', data: 'hello' },
      ]),
      ['file', 'note'],
    ],
    [
      'an extra field before the file',
      multipartBody([
        { name: 'note', data: 'hello' },
        { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
      ]),
      ['file', 'note'],
    ],
    ['file sent as a plain value', multipartBody([{ name: 'file', data: 'JVBERi0xLjcK' }]), ['file']],
  ])('refuses %s', async (_label, body, fields) => {
    const before = await blobCount();
    const response = await upload(body as Buffer);
    expectFileProblem(response, 422, 'validation-error');
    expect(Object.keys(response.body.errors).sort()).toEqual(fields);
    expect(await blobCount()).toBe(before);
    expect(await versionCount()).toBe(0);
  });

  it('refuses a truncated multipart body', async () => {
    const full = fileForm(pdfBytes(100_000));
    const response = await upload(full.subarray(0, full.length - 40));
    expectFileProblem(response, 422, 'validation-error');
    expect(Object.keys(response.body.errors)).toEqual(['file']);
  });

  it('refuses a body that does not match its boundary', async () => {
    const response = await upload(fileForm(pdfBytes()), 'multipart/form-data; boundary=something-else');
    expectFileProblem(response, 422, 'validation-error');
  });

  it('refuses multipart/form-data without a boundary', async () => {
    const response = await upload(fileForm(pdfBytes()), 'multipart/form-data');
    expectFileProblem(response, 422, 'validation-error');
  });

  it('keeps the connection usable after a refusal that left the body unread', async () => {
    const refused = await upload(fileForm(pngBytes(2 * 1024 * 1024)));
    expect(refused.status).toBe(415);
    const next = await t.http.get(`/api/v1/site-visits/${visitId}`, { token: v.token });
    expect(next.status).toBe(200);
  });

  it('cleans up after a client that goes away in the middle of an upload', async () => {
    const before = await blobCount();
    const body = fileForm(pdfBytes(2 * 1024 * 1024));
    const url = new URL(t.baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST ${path()} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${v.token}\r\nContent-Type: ${MULTIPART_CONTENT_TYPE}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    await new Promise<void>((resolve) => socket.write(body.subarray(0, 1024 * 1024), () => resolve()));
    const settled = async (done: (count: number) => boolean) => {
      for (let attempt = 0; attempt < 250 && !done(await blobCount()); attempt++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      return blobCount();
    };
    // The upload is being stored...
    expect(await settled((count) => count > before)).toBe(before + 1);
    socket.destroy();
    // ...until the server notices the close, fails the upload and removes the partial blob.
    expect(await settled((count) => count === before)).toBe(before);
    expect(await versionCount()).toBe(0);
  });
});

describe('the visit', () => {
  it('must exist (404), checked before the body is read', async () => {
    const response = await upload(fileForm(pdfBytes()), MULTIPART_CONTENT_TYPE, 'visit_00000000000000000000000000');
    expectFileProblem(response, 404, 'not-found');
  });

  it('keeps its version when an upload is refused', async () => {
    const read = await t.http.get(`/api/v1/site-visits/${visitId}`, { token: v.token });
    expect(read.body.data.meta.version).toBe(1);
    expect(read.body.data.attributes.returnLabel).toBeNull();
  });
});

describe('multipart elsewhere', () => {
  it('stays 415 on routes that take JSON', async () => {
    const elsewhere = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      body: fileForm(pdfBytes()),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expectFileProblem(elsewhere, 415, 'unsupported-media-type');
  });
});
