import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { fileForm, MULTIPART_CONTENT_TYPE, multipartBody, pdfBytes } from '../helpers/multipart.js';
import { createVisit, visitTenant, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let v: VisitTenant;
beforeAll(async () => {
  t = await startTestApp({ clock });
  v = await visitTenant(t);
});
afterAll(async () => t?.close());

function upload(visitId: string, body: Buffer, token = v.token) {
  return t.http.post(`/api/v1/site-visits/${visitId}/return-label`, {
    token,
    body,
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
}

async function download(visitId: string) {
  const response = await fetch(`${t.baseUrl}/api/v1/site-visits/${visitId}/return-label`, {
    headers: { authorization: `Bearer ${v.token}` },
  });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** A PDF whose bytes say which one it is. */
function labelPdf(mark: string, size = 5000): Buffer {
  const bytes = pdfBytes(size);
  bytes.write(mark, 20, 'latin1');
  return bytes;
}

describe('POST /api/v1/site-visits/{id}/return-label', () => {
  it('stores version 1 and answers the file object with the absolute download URL', async () => {
    const visit = await createVisit(t, v);
    const response = await upload(visit.id, fileForm(labelPdf('first'), 'label-1.pdf'));
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        siteVisitId: visit.id,
        returnLabel: {
          url: `${t.config.publicBaseUrl}/api/v1/site-visits/${visit.id}/return-label`,
          versions: [
            {
              version: 1,
              fileName: 'label-1.pdf',
              contentType: 'application/pdf',
              sizeBytes: 5000,
              uploadedAt: clock.now().toISOString(),
            },
          ],
        },
      },
    });
  });

  it('adds a version per upload, serves the latest, and shows the versions on the visit', async () => {
    const visit = await createVisit(t, v);
    clock.advance(1000);
    expect((await upload(visit.id, fileForm(labelPdf('first'), 'first.pdf'))).status).toBe(201);
    clock.advance(1000);
    const second = await upload(visit.id, fileForm(labelPdf('second', 7000), 'second.pdf'));
    expect(second.status).toBe(201);
    expect(
      second.body.data.returnLabel.versions.map((version: { version: number; fileName: string }) => [
        version.version,
        version.fileName,
      ]),
    ).toEqual([
      [1, 'first.pdf'],
      [2, 'second.pdf'],
    ]);

    const { response, bytes } = await download(visit.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe('7000');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename=second.pdf');
    expect(bytes.equals(labelPdf('second', 7000))).toBe(true);

    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.body.data.attributes.returnLabel).toEqual(second.body.data.returnLabel);
  });

  it("adds 1 to the visit's version and moves updatedAt with every upload", async () => {
    const visit = await createVisit(t, v);
    clock.advance(5000);
    await upload(visit.id, fileForm(pdfBytes()));
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.body.data.meta.version).toBe(2);
    expect(read.headers.get('etag')).toBe('"2"');
    expect(read.body.data.attributes.updatedAt).toBe(clock.now().toISOString());
    const stale = await t.http.patch(`/api/v1/site-visits/${visit.id}`, {
      token: v.token,
      json: { description: 'x' },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(409);
  });

  it('numbers concurrent uploads to one visit one after the other', async () => {
    const visit = await createVisit(t, v);
    const responses = await Promise.all(
      [1, 2, 3].map((index) => upload(visit.id, fileForm(labelPdf(`c${index}`), `c${index}.pdf`))),
    );
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201]);
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(
      read.body.data.attributes.returnLabel.versions.map((version: { version: number }) => version.version),
    ).toEqual([1, 2, 3]);
    expect(read.body.data.meta.version).toBe(4);
  });

  it('round-trips a file of several storage chunks byte for byte', async () => {
    const visit = await createVisit(t, v);
    const bytes = pdfBytes(1_000_003);
    for (let index = 100; index < bytes.length - 100; index += 997) bytes[index] = index % 251;
    expect((await upload(visit.id, fileForm(bytes))).status).toBe(201);
    const downloaded = await download(visit.id);
    expect(downloaded.bytes.length).toBe(bytes.length);
    expect(downloaded.bytes.equals(bytes)).toBe(true);
  });

  it('accepts PDF bytes under a wrong declared type and name, storing the detected type and its extension', async () => {
    const visit = await createVisit(t, v);
    const response = await upload(visit.id, fileForm(pdfBytes(), 'scan.png', 'image/png'));
    expect(response.status).toBe(201);
    expect(response.body.data.returnLabel.versions[0]).toMatchObject({
      fileName: 'scan.pdf',
      contentType: 'application/pdf',
    });
  });

  it('accepts a file part declared application/octet-stream without a file name, naming it return-label.pdf', async () => {
    const visit = await createVisit(t, v);
    const response = await upload(
      visit.id,
      multipartBody([{ name: 'file', contentType: 'application/octet-stream', data: pdfBytes() }]),
    );
    expect(response.status).toBe(201);
    expect(response.body.data.returnLabel.versions[0].fileName).toBe('return-label.pdf');
  });

  it.each([
    ['C:\\Users\\me\\Desktop\\label.pdf', 'label.pdf'],
    ['../../etc/passwd.pdf', 'passwd.pdf'],
    ['lab\u0007el\u202e.pdf', 'label.pdf'],
    ['..', 'return-label.pdf'],
    ['   ', 'return-label.pdf'],
    [`${'n'.repeat(300)}.pdf`, `${'n'.repeat(196)}.pdf`],
  ])('cleans the file name %j to %j', async (sent, stored) => {
    const visit = await createVisit(t, v);
    const response = await upload(visit.id, fileForm(pdfBytes(), sent));
    expect(response.status).toBe(201);
    expect(response.body.data.returnLabel.versions[0].fileName).toBe(stored);
  });

  it('serves a non-ASCII file name with an ASCII fallback and RFC 6266 filename*', async () => {
    const visit = await createVisit(t, v);
    const name = 'Étiquette n°1 (copie) 100%.pdf';
    const body = multipartBody([{ name: 'file', filename: name, contentType: 'application/pdf', data: pdfBytes() }]);
    expect((await upload(visit.id, body)).status).toBe(201);
    const { response } = await download(visit.id);
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Etiquette n_1 (copie) 100_.pdf"; filename*=UTF-8''%C3%89tiquette%20n%C2%B01%20%28copie%29%20100%25.pdf`,
    );
  });
});

describe('GET /api/v1/site-visits/{id}/return-label', () => {
  it('answers 404 before the first upload, while the visit shows returnLabel null', async () => {
    const visit = await createVisit(t, v);
    expect(visit.attributes.returnLabel).toBeNull();
    const response = await t.http.get(`/api/v1/site-visits/${visit.id}/return-label`, { token: v.token });
    expect(response.status).toBe(404);
    expect(response.body.type).toMatch(/not-found$/);
    expect(response.body.detail).toMatch(/Return label/);
  });

  it('answers HEAD with the headers only', async () => {
    const visit = await createVisit(t, v);
    await upload(visit.id, fileForm(pdfBytes(3000)));
    const response = await fetch(`${t.baseUrl}/api/v1/site-visits/${visit.id}/return-label`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${v.token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe('3000');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });
});
