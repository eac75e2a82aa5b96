import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { attachmentPath, createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
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
import { expectInvalid, expectProblem } from '../helpers/problems.js';

const MIB_10 = 10 * 1024 * 1024;

let t: TestApp;
let m: MessageTenant;
let messageId: string;
beforeAll(async () => {
  t = await startTestApp();
  m = await messageTenant(t);
  messageId = (await createMessage(t, m)).id;
});
afterAll(async () => t?.close());

function upload(body: Buffer, contentType = MULTIPART_CONTENT_TYPE, id = messageId) {
  return t.http.post(attachmentPath(id), { token: m.token, body, headers: { 'content-type': contentType } });
}

/** The tenant's stored blobs: a refused upload must leave none behind. */
const blobCount = () => storedBlobCount(t, m.tenantId);

/** The refused uploads leave the message as it was created. */
async function expectMessageUntouched() {
  const read = await t.http.get(`/api/v1/messages/${messageId}`, { token: m.token });
  expect(read.body.data.meta.version).toBe(1);
  expect(read.body.data.attributes.fileAttachment).toBeNull();
}

const GIF = Buffer.concat([
  Buffer.from('GIF89a'),
  Buffer.from([0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00]),
  Buffer.alloc(2000, 0x20),
]);
/** A PNG whose acTL chunk (before any image data) makes it an animated PNG. */
const APNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from([0, 0, 0, 13]),
  Buffer.from('IHDR'),
  Buffer.alloc(13 + 4),
  Buffer.from([0, 0, 0, 8]),
  Buffer.from('acTL'),
  Buffer.alloc(8 + 4),
  Buffer.alloc(2000),
]);
const WEBP = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([0x24, 0x08, 0x00, 0x00]),
  Buffer.from('WEBPVP8 '),
  Buffer.alloc(2000, 0),
]);

describe('type (decided by the bytes, 415)', () => {
  it.each([
    ['plain text named .pdf', Buffer.from('Site notes, not a PDF.\n'.repeat(200)), 'notes.pdf', 'application/pdf'],
    ['a GIF named .png', GIF, 'photo.png', 'image/png'],
    ['a GIF declared as a GIF', GIF, 'photo.gif', 'image/gif'],
    ['a WebP named .jpg', WEBP, 'photo.jpg', 'image/jpeg'],
    ['an animated PNG (APNG)', APNG, 'anim.png', 'image/png'],
    [
      'an SVG named .png',
      Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>${' '.repeat(2000)}`),
      'x.png',
      'image/png',
    ],
    [
      'an HTML page carrying a PDF (polyglot)',
      Buffer.concat([Buffer.from('<html><body>'), pdfBytes(2000)]),
      'x.pdf',
      'application/pdf',
    ],
    [
      'a GIF with an embedded PDF (polyglot)',
      Buffer.concat([GIF.subarray(0, 64), pdfBytes(2000)]),
      'x.pdf',
      'application/pdf',
    ],
    [
      'a PDF header after 8 bytes of junk (polyglot)',
      Buffer.concat([Buffer.from('GARBAGE\n'), pdfBytes(2000)]),
      'x.pdf',
      'application/pdf',
    ],
    [
      'a ZIP archive named .jpg',
      Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(2000, 0x41)]),
      'x.jpg',
      'image/jpeg',
    ],
    ['a tiny file of three bytes', Buffer.from('%PD'), 'x.pdf', 'application/pdf'],
  ])('refuses %s, storing nothing', async (_label, bytes, filename, declared) => {
    const before = await blobCount();
    const response = await upload(fileForm(bytes, filename, declared));
    expectProblem(response, 415, 'unsupported-media-type');
    expect(response.body.detail).toContain('PDF, PNG, JPG');
    expect(await blobCount()).toBe(before);
    await expectMessageUntouched();
  });

  it.each([
    ['application/json', '{"file":"JVBERi0="}'],
    ['application/pdf', pdfBytes().toString('latin1')],
    ['image/png', pngBytes().toString('latin1')],
  ])('refuses a %s body (not multipart) with 415', async (contentType, body) => {
    expectProblem(await upload(Buffer.from(body, 'latin1'), contentType), 415, 'unsupported-media-type');
  });
});

describe('size', () => {
  it('accepts a file of exactly 10 MiB (10,485,760 bytes)', async () => {
    const message = await createMessage(t, m);
    const response = await upload(
      fileForm(jpegBytes(MIB_10), 'big.jpg', 'image/jpeg'),
      MULTIPART_CONTENT_TYPE,
      message.id,
    );
    expect(response.status).toBe(201);
    expect(response.body.data.fileAttachment.versions[0]).toMatchObject({
      sizeBytes: MIB_10,
      contentType: 'image/jpeg',
    });
  });

  it('refuses 10 MiB + 1 byte with 413, storing nothing', async () => {
    const before = await blobCount();
    expectProblem(await upload(fileForm(pngBytes(MIB_10 + 1), 'big.png', 'image/png')), 413, 'payload-too-large');
    expect(await blobCount()).toBe(before);
    await expectMessageUntouched();
  });

  it('refuses a Content-Length that cannot hold an acceptable file before reading the body', async () => {
    const response = await rawRequest(
      t.baseUrl,
      attachmentPath(messageId),
      {
        authorization: `Bearer ${m.token}`,
        'content-type': MULTIPART_CONTENT_TYPE,
        'content-length': String(MIB_10 + 64 * 1024 + 1),
      },
      Buffer.from(`--${BOUNDARY}\r\n`),
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).type).toMatch(/payload-too-large$/);
  });

  it('refuses an empty file (0 bytes) with 422 naming file', async () => {
    const response = await upload(fileForm(Buffer.alloc(0), 'empty.png', 'image/png'));
    expect(expectInvalid(response, ['file']).file).toEqual(['must not be empty']);
    await expectMessageUntouched();
  });
});

describe('form shape (422)', () => {
  it.each([
    [
      'the wrong field name',
      multipartBody([{ name: 'attachment', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() }]),
      ['attachment', 'file'],
    ],
    ['no part at all', multipartBody([]), ['file']],
    [
      'two files',
      multipartBody([
        { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
        { name: 'file', filename: 'b.png', contentType: 'image/png', data: pngBytes() },
      ]),
      ['file'],
    ],
    [
      'an extra field',
      multipartBody([
        { name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() },
        { name: 'messageThread', data: 'hello' },
      ]),
      ['file', 'messageThread'],
    ],
    ['file sent as a plain value', multipartBody([{ name: 'file', data: 'JVBERi0xLjcK' }]), ['file']],
  ])('refuses %s, storing nothing', async (_label, body, fields) => {
    const before = await blobCount();
    expectInvalid(await upload(body as Buffer), fields as string[]);
    expect(await blobCount()).toBe(before);
    await expectMessageUntouched();
  });

  it('refuses a truncated multipart body', async () => {
    const full = fileForm(pdfBytes(100_000));
    expectInvalid(await upload(full.subarray(0, full.length - 40)), ['file']);
  });
});

describe('the message', () => {
  it.each(['msg_00000000000000000000000000', 'visit_00000000000000000000000000'])(
    'must exist: %s is 404, checked before the body is read',
    async (id) => {
      const before = await blobCount();
      const response = await upload(fileForm(pdfBytes()), MULTIPART_CONTENT_TYPE, id);
      expectProblem(response, 404, 'not-found');
      expect(response.body.detail).toMatch(/^Message/);
      expect(await blobCount()).toBe(before);
    },
  );

  it('stays 415 for multipart bodies on the JSON routes', async () => {
    const response = await t.http.post('/api/v1/messages', {
      token: m.token,
      body: fileForm(pdfBytes()),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expectProblem(response, 415, 'unsupported-media-type');
  });
});
