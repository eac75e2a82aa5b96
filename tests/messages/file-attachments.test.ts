import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  attachmentPath,
  createMessage,
  messageTenant,
  type MessageTenant,
  uploadAttachment,
} from '../helpers/messages.js';
import { jpegBytes, MULTIPART_CONTENT_TYPE, multipartBody, pdfBytes, pngBytes } from '../helpers/multipart.js';

let t: TestApp;
const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let m: MessageTenant;
beforeAll(async () => {
  t = await startTestApp({ clock });
  m = await messageTenant(t);
});
afterAll(async () => t?.close());

function upload(messageId: string, data: Buffer, filename?: string, declared?: string) {
  return uploadAttachment(t, m.token, messageId, data, filename, declared);
}

async function download(messageId: string) {
  const response = await fetch(`${t.baseUrl}${attachmentPath(messageId)}`, {
    headers: { authorization: `Bearer ${m.token}` },
  });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Bytes of the given kind whose content says which file it is. */
function marked(kind: (size: number) => Buffer, mark: string, size = 4000): Buffer {
  const bytes = kind(size);
  bytes.write(mark, 40, 'latin1');
  return bytes;
}

const KINDS = [
  { kind: 'PDF', bytes: pdfBytes, contentType: 'application/pdf', name: 'report.pdf' },
  { kind: 'PNG', bytes: pngBytes, contentType: 'image/png', name: 'photo.png' },
  { kind: 'JPEG', bytes: jpegBytes, contentType: 'image/jpeg', name: 'photo.jpg' },
];

describe('POST /api/v1/messages/{id}/file-attachment', () => {
  it.each(KINDS)(
    'stores a $kind as version 1 and answers the file object with the absolute URL',
    async ({ bytes, contentType, name }) => {
      const message = await createMessage(t, m);
      const response = await upload(message.id, marked(bytes, 'one', 5000), name, contentType);
      expect(response.status).toBe(201);
      expect(response.headers.get('etag')).toBeNull();
      expect(response.body).toEqual({
        data: {
          messageId: message.id,
          fileAttachment: {
            url: `${t.config.publicBaseUrl}/api/v1/messages/${message.id}/file-attachment`,
            versions: [
              { version: 1, fileName: name, contentType, sizeBytes: 5000, uploadedAt: clock.now().toISOString() },
            ],
          },
        },
      });
    },
  );

  it.each(KINDS)(
    'serves the latest $kind with its stored content type and name',
    async ({ bytes, contentType, name }) => {
      const message = await createMessage(t, m);
      await upload(message.id, marked(bytes, 'old'), `old-${name}`, contentType);
      await upload(message.id, marked(bytes, 'new', 6000), name, contentType);
      const { response, bytes: body } = await download(message.id);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(contentType);
      expect(response.headers.get('content-length')).toBe('6000');
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename=${name}`);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(body.equals(marked(bytes, 'new', 6000))).toBe(true);
    },
  );

  it('keeps every version, of any accepted type, and serves the latest', async () => {
    const message = await createMessage(t, m);
    for (const [index, { bytes, contentType, name }] of KINDS.entries()) {
      clock.advance(1000);
      const response = await upload(message.id, marked(bytes, `v${index}`), name, contentType);
      expect(response.status).toBe(201);
      expect(response.body.data.fileAttachment.versions).toHaveLength(index + 1);
    }
    const read = await t.http.get(`/api/v1/messages/${message.id}`, { token: m.token });
    expect(
      read.body.data.attributes.fileAttachment.versions.map((version: { version: number; contentType: string }) => [
        version.version,
        version.contentType,
      ]),
    ).toEqual([
      [1, 'application/pdf'],
      [2, 'image/png'],
      [3, 'image/jpeg'],
    ]);
    const { response, bytes } = await download(message.id);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(bytes.equals(marked(jpegBytes, 'v2'))).toBe(true);
  });

  it("adds 1 to the message's version and moves updatedAt with every upload", async () => {
    const message = await createMessage(t, m);
    clock.advance(5000);
    await upload(message.id, pdfBytes());
    clock.advance(5000);
    await upload(message.id, pngBytes(), 'p.png', 'image/png');
    const read = await t.http.get(`/api/v1/messages/${message.id}`, { token: m.token });
    expect(read.body.data.meta.version).toBe(3);
    expect(read.headers.get('etag')).toBe('"3"');
    expect(read.body.data.attributes.updatedAt).toBe(clock.now().toISOString());
    expect(read.body.data.attributes.createdAt).toBe(message.attributes.createdAt);
    const stale = await t.http.patch(`/api/v1/messages/${message.id}`, {
      token: m.token,
      json: { status: 'Closed' },
      headers: { 'if-match': message.meta.etag },
    });
    expect(stale.status).toBe(409);
  });

  it('shows fileAttachment on the message, in the list and on the response to a PATCH', async () => {
    const message = await createMessage(t, m);
    const uploaded = await upload(message.id, pdfBytes(3000), 'note.pdf');
    const { fileAttachment } = uploaded.body.data;
    const read = await t.http.get(`/api/v1/messages/${message.id}`, { token: m.token });
    expect(read.body.data.attributes.fileAttachment).toEqual(fileAttachment);
    const list = await t.http.get('/api/v1/messages', { token: m.token, query: { 'page[size]': 100 } });
    expect(list.body.data.find((entry: { id: string }) => entry.id === message.id).attributes.fileAttachment).toEqual(
      fileAttachment,
    );
    const patched = await t.http.patch(`/api/v1/messages/${message.id}`, { token: m.token, json: { buyer: true } });
    expect(patched.body.data.attributes.fileAttachment).toEqual(fileAttachment);
  });

  it('numbers concurrent uploads to one message one after the other', async () => {
    const message = await createMessage(t, m);
    const responses = await Promise.all(
      [1, 2, 3].map((index) => upload(message.id, marked(pdfBytes, `c${index}`), `c${index}.pdf`)),
    );
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201]);
    const read = await t.http.get(`/api/v1/messages/${message.id}`, { token: m.token });
    expect(
      read.body.data.attributes.fileAttachment.versions.map((version: { version: number }) => version.version),
    ).toEqual([1, 2, 3]);
    expect(read.body.data.meta.version).toBe(4);
  });

  it('decides the type from the bytes: a PNG declared as PDF and named .pdf is stored as image/png, named .png', async () => {
    const message = await createMessage(t, m);
    const response = await upload(message.id, pngBytes(), 'scan.pdf', 'application/pdf');
    expect(response.status).toBe(201);
    expect(response.body.data.fileAttachment.versions[0]).toMatchObject({
      fileName: 'scan.png',
      contentType: 'image/png',
    });
    const { response: served } = await download(message.id);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('content-disposition')).toBe('attachment; filename=scan.png');
  });

  it('judges only the leading bytes: a PNG followed by PDF bytes is a PNG', async () => {
    const message = await createMessage(t, m);
    const response = await upload(
      message.id,
      Buffer.concat([pngBytes(64), pdfBytes(2000)]),
      'mixed.pdf',
      'application/pdf',
    );
    expect(response.status).toBe(201);
    expect(response.body.data.fileAttachment.versions[0].contentType).toBe('image/png');
  });

  it.each([
    ['a PDF', pdfBytes(), 'attachment.pdf'],
    ['a PNG', pngBytes(), 'attachment.png'],
    ['a JPEG', jpegBytes(), 'attachment.jpg'],
  ])('names %s sent without a file name after its detected type', async (_label, bytes, stored) => {
    const message = await createMessage(t, m);
    const response = await t.http.post(attachmentPath(message.id), {
      token: m.token,
      body: multipartBody([{ name: 'file', contentType: 'application/octet-stream', data: bytes }]),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expect(response.status).toBe(201);
    expect(response.body.data.fileAttachment.versions[0].fileName).toBe(stored);
  });

  it('is not idempotent: the same upload twice makes two versions', async () => {
    const message = await createMessage(t, m);
    const body = {
      token: m.token,
      body: multipartBody([{ name: 'file', filename: 'a.pdf', contentType: 'application/pdf', data: pdfBytes() }]),
    };
    const headers = { 'content-type': MULTIPART_CONTENT_TYPE, 'idempotency-key': 'ignored-on-uploads' };
    await t.http.post(attachmentPath(message.id), { ...body, headers });
    const second = await t.http.post(attachmentPath(message.id), { ...body, headers });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data.fileAttachment.versions).toHaveLength(2);
  });
});

describe('GET /api/v1/messages/{id}/file-attachment', () => {
  it('answers 404 before the first upload, while the message shows fileAttachment null', async () => {
    const message = await createMessage(t, m);
    expect(message.attributes.fileAttachment).toBeNull();
    const response = await t.http.get(attachmentPath(message.id), { token: m.token });
    expect(response.status).toBe(404);
    expect(response.body.type).toMatch(/not-found$/);
    expect(response.body.detail).toMatch(/File attachment/);
  });

  it('answers 404 for an unknown message', async () => {
    const response = await t.http.get(attachmentPath('msg_00000000000000000000000000'), { token: m.token });
    expect(response.status).toBe(404);
    expect(response.body.detail).toMatch(/Message/);
  });

  it('answers HEAD with the headers only', async () => {
    const message = await createMessage(t, m);
    await upload(message.id, jpegBytes(3000), 'x.jpg', 'image/jpeg');
    const response = await fetch(`${t.baseUrl}${attachmentPath(message.id)}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${m.token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(response.headers.get('content-length')).toBe('3000');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });
});
