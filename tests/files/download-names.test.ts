/**
 * Issue 15 item 6: a download's name cannot lie about the file's type. The name is made safe once, at
 * upload (control and bidirectional characters removed, the detected type's extension), and that name
 * is the version's fileName and the download's; versions stored before keep their names in JSON and are
 * served with the corrected extension.
 */
import { parse } from 'content-disposition';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILE_ATTACHMENT_OWNER } from '../../src/modules/messages/service.js';
import { RETURN_LABEL_OWNER } from '../../src/modules/site-visits/representation.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { attachmentPath, createMessage, type MessageTenant, messageTenant } from '../helpers/messages.js';
import { BOUNDARY, fileForm, jpegBytes, MULTIPART_CONTENT_TYPE, pdfBytes, pngBytes } from '../helpers/multipart.js';
import { createVisit } from '../helpers/visits.js';

let t: TestApp;
let m: MessageTenant;
beforeAll(async () => {
  t = await startTestApp();
  m = await messageTenant(t);
});
afterAll(async () => t?.close());

const returnLabelPath = (visitId: string) => `/api/v1/site-visits/${visitId}/return-label`;

async function upload(path: string, data: Buffer, filename: string, declared: string) {
  const response = await t.http.post(path, {
    token: m.fullToken,
    body: fileForm(data, filename, declared),
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
  expect(response.status, response.text).toBe(201);
  const file = response.body.data.returnLabel ?? response.body.data.fileAttachment;
  return file.versions.at(-1) as { version: number; fileName: string; contentType: string };
}

/** The download's Content-Disposition (GET and HEAD agree) and the name a browser takes from it. */
async function servedName(path: string): Promise<{ header: string; name: string }> {
  const [get, head] = await Promise.all(
    ['GET', 'HEAD'].map((method) =>
      fetch(`${t.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${m.fullToken}` } }),
    ),
  );
  expect(get!.status).toBe(200);
  await get!.arrayBuffer();
  const header = get!.headers.get('content-disposition')!;
  expect(head!.headers.get('content-disposition')).toBe(header);
  const parsed = parse(header);
  expect(parsed.type).toBe('attachment');
  return { header, name: parsed.parameters.filename! };
}

describe('download names', () => {
  it('stores and serves a PDF uploaded as poly.html as poly.pdf', async () => {
    const path = returnLabelPath(m.visitId);
    const version = await upload(path, pdfBytes(), 'poly.html', 'text/html');
    expect(version).toMatchObject({ fileName: 'poly.pdf', contentType: 'application/pdf' });
    expect(await servedName(path)).toEqual({ header: 'attachment; filename=poly.pdf', name: 'poly.pdf' });
    const visit = await t.http.get(`/api/v1/site-visits/${m.visitId}`, { token: m.fullToken });
    expect(visit.body.data.attributes.returnLabel.versions.at(-1).fileName).toBe('poly.pdf');
  });

  it.each([
    ['invoice\u202efdp.exe', pdfBytes(), 'application/pdf', 'invoicefdp.pdf'],
    ['photo\u2067gnp.html\u2069', pngBytes(), 'image/png', 'photognp.png'],
    ['scan\u200f\u061c.svg', jpegBytes(), 'image/jpeg', 'scan.jpg'],
    ['label.pdf.exe', pdfBytes(), 'application/pdf', 'label.pdf'],
    ['report', pdfBytes(), 'application/pdf', 'report.pdf'],
    ['holiday.JPEG', jpegBytes(), 'image/jpeg', 'holiday.JPEG'],
  ])('stores %j uploaded as an attachment as %4$j and serves that name', async (sent, bytes, mime, stored) => {
    const message = await createMessage(t, m);
    const version = await upload(attachmentPath(message.id), bytes, sent, 'application/octet-stream');
    expect(version).toMatchObject({ fileName: stored, contentType: mime });
    expect(await servedName(attachmentPath(message.id))).toEqual({
      header: `attachment; filename=${stored}`,
      name: stored,
    });
  });

  it('serves a non-ASCII name as UTF-8 in filename* with an ASCII fallback ending in the same extension', async () => {
    const message = await createMessage(t, m);
    const version = await upload(attachmentPath(message.id), pdfBytes(), 'Счёт «№5» café.html', 'text/html');
    expect(version.fileName).toBe('Счёт «№5» café.pdf');
    const { header, name } = await servedName(attachmentPath(message.id));
    expect(name).toBe('Счёт «№5» café.pdf');
    expect(header).toBe(
      `attachment; filename="____ _No5_ cafe.pdf"; filename*=UTF-8''%D0%A1%D1%87%D1%91%D1%82%20%C2%AB%E2%84%965%C2%BB%20caf%C3%A9.pdf`,
    );
  });

  it('keeps quotes out of the fallback and exact in filename*', async () => {
    const message = await createMessage(t, m);
    // A quote in a multipart file name may arrive in the RFC 5987 form (a backslash is a path separator and cut).
    const sent = 'say "cheese"; x=1.png';
    const body = Buffer.concat([
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''${encodeURIComponent(sent)}\r\n` +
          'Content-Type: image/png\r\n\r\n',
      ),
      pngBytes(),
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]);
    const response = await t.http.post(attachmentPath(message.id), {
      token: m.fullToken,
      body,
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data.fileAttachment.versions[0].fileName).toBe(sent);
    const { header, name } = await servedName(attachmentPath(message.id));
    expect(name).toBe(sent);
    expect(header).toBe(
      `attachment; filename="say _cheese_; x=1.png"; filename*=UTF-8''say%20%22cheese%22%3B%20x%3D1.png`,
    );
  });

  it('takes a name with quotes or line breaks as browsers, curl and FormData send it (%22, %0D, %0A)', async () => {
    const message = await createMessage(t, m);
    // Node's FormData escapes the name the way the HTML standard's multipart/form-data encoding does.
    const form = new FormData();
    form.append('file', new Blob([pngBytes()], { type: 'image/png' }), 'say "cheese"\r\n.png');
    const response = await fetch(`${t.baseUrl}${attachmentPath(message.id)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.fullToken}` },
      body: form,
    });
    const body = (await response.json()) as { data: { fileAttachment: { versions: { fileName: string }[] } } };
    expect(response.status, JSON.stringify(body)).toBe(201);
    expect(body.data.fileAttachment.versions[0]!.fileName).toBe('say "cheese".png');
    expect(await servedName(attachmentPath(message.id))).toEqual({
      header: `attachment; filename="say _cheese_.png"; filename*=UTF-8''say%20%22cheese%22.png`,
      name: 'say "cheese".png',
    });
  });

  it.each([
    [RETURN_LABEL_OWNER, 'poly.html', 'poly.pdf'],
    [RETURN_LABEL_OWNER, 'invoice\u061cfdp.exe', 'invoicefdp.pdf'],
    [FILE_ATTACHMENT_OWNER, 'notes', 'notes.pdf'],
  ])(
    'serves a %s version stored before with the name %j as %j, its JSON unchanged',
    async (ownerType, legacyName, servedAs) => {
      const isLabel = ownerType === RETURN_LABEL_OWNER;
      const ownerId = (isLabel ? await createVisit(t, m) : await createMessage(t, m)).id;
      const path = isLabel ? returnLabelPath(ownerId) : attachmentPath(ownerId);
      await upload(path, pdfBytes(), 'first.pdf', 'application/pdf');
      // A row as an older release stored it: the name as sent, less its control characters.
      const first = await t.database.db
        .selectFrom('file_versions')
        .selectAll()
        .where('owner_type', '=', ownerType)
        .where('owner_id', '=', ownerId)
        .executeTakeFirstOrThrow();
      await t.database.db
        .insertInto('file_versions')
        .values({ ...first, version: 2, file_name: legacyName })
        .execute();

      expect(await servedName(path)).toMatchObject({ name: servedAs });
      const read = await t.http.get(isLabel ? `/api/v1/site-visits/${ownerId}` : `/api/v1/messages/${ownerId}`, {
        token: m.fullToken,
      });
      const file = read.body.data.attributes.returnLabel ?? read.body.data.attributes.fileAttachment;
      expect(file.versions.map((each: { fileName: string }) => each.fileName)).toEqual(['first.pdf', legacyName]);
    },
  );

  // Hostile-tenant probe: the pattern that removed trailing dots and spaces (/[.\s]+$/) was tried from every
  // dot or space of a run and read the run to its end each time: a 70,000-character run between two letters
  // (the multipart header block allows 80 KiB) held the event loop for seconds, every tenant's requests with it.
  it.each([
    ['dots', '.'],
    ['spaces', ' '],
  ])('takes a name with a run of 70,000 %s inside at the cost of a short one', async (_kind, filler) => {
    const before = process.cpuUsage();
    const version = await upload(
      returnLabelPath(m.visitId),
      pdfBytes(),
      `a${filler.repeat(70_000)}b.pdf`,
      'application/pdf',
    );
    const used = process.cpuUsage(before);
    // An upload costs tens of milliseconds of this process's CPU (the app, its database and the test's client);
    // the quadratic pattern took seconds. CPU time, not wall time: a loaded machine slows it far less.
    expect((used.user + used.system) / 1000).toBeLessThan(1_000);
    // The stem is cut at 196 characters, then its trailing run goes.
    expect(version.fileName).toBe('a.pdf');
  });
});
