/**
 * Hostile file names against an API process of its own (issue 15 item 6): names that disguise their
 * type with bidirectional overrides, isolates and marks, control characters, another type's extension,
 * doubled extensions, trailing dots, paths, quotes, non-ASCII text. Every upload is stored and served
 * under one name that ends in the detected type's extension and hides nothing, and the download's
 * Content-Disposition parses back to exactly the stored name. Versions stored before the rule (rows
 * written past the API) keep their name in JSON and are served with the corrected extension.
 */
import { parse } from 'content-disposition';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
import { BOUNDARY, jpegBytes, MULTIPART_CONTENT_TYPE, pdfBytes, pngBytes } from '../helpers/multipart.js';
import { reportFigure } from './lib/figures.js';
import { type FaultStage, faultStage } from './lib/service.js';

let stage: FaultStage;
let m: MessageTenant;

beforeAll(async () => {
  stage = await faultStage('file-names');
  await stage.startApi();
  m = await messageTenant(stage.operator);
});
afterAll(async () => stage?.close());

const TYPES = {
  pdf: { bytes: pdfBytes, mime: 'application/pdf', extensions: ['pdf'] },
  png: { bytes: pngBytes, mime: 'image/png', extensions: ['png'] },
  jpeg: { bytes: jpegBytes, mime: 'image/jpeg', extensions: ['jpg', 'jpeg', 'jpe', 'jfif'] },
} as const;

/** Characters that must never reach a stored or served name. */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** [name as sent, type of the bytes]; sent as RFC 5987 `filename*` so that every character arrives. */
const NAMES: Array<[string, keyof typeof TYPES]> = [
  ['poly.html', 'pdf'],
  ['invoice\u202efdp.exe', 'pdf'],
  ['invoice\u202egnp.exe', 'png'],
  ['photo\u2066gpj.scr\u2069', 'jpeg'],
  ['report\u2067fdp.bat\u2069', 'pdf'],
  ['a\u202a\u202b\u202c\u202db\u200e\u200f\u061c.hta', 'pdf'],
  ['label.pdf.exe', 'pdf'],
  ['label.exe.pdf', 'pdf'],
  ['image.svg', 'png'],
  ['page.xhtml', 'jpeg'],
  ['page.HTM', 'pdf'],
  ['run.ps1', 'pdf'],
  ['shortcut.lnk', 'png'],
  ['no-extension', 'pdf'],
  ['trailing.html. . .', 'pdf'],
  ['tab\there\u0007\u001b[31mred\u007f\u0085.js', 'pdf'],
  ['..\\..\\windows\\system32\\evil.dll', 'pdf'],
  ['../../var/www/index.php', 'png'],
  ['.htaccess', 'pdf'],
  ['quote " and ; semicolon.html', 'pdf'],
  ['100%25 real%2Epdf', 'pdf'],
  ['Счёт №5 «копия».html', 'pdf'],
  ['写真\u202egnp.exe', 'jpeg'],
  ['e\u0301te\u0301.svg', 'png'],
  [`${'long'.repeat(80)}.html`, 'pdf'],
  ['😀 emoji.exe', 'jpeg'],
];

/** One upload whose file name is sent in the extended form, as a form of a browser could not spoil it. */
async function upload(messageId: string, name: string, bytes: Buffer) {
  const body = Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''${encodeURIComponent(name)}\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    bytes,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
  const response = await stage.operator.http.post(`/api/v1/messages/${messageId}/file-attachment`, {
    token: m.fullToken,
    body,
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
  expect(response.status, `${JSON.stringify(name)}: ${response.text}`).toBe(201);
  return response.body.data.fileAttachment.versions.at(-1) as { fileName: string; contentType: string };
}

/** The download's Content-Disposition, and the names a current and an old client take from it. */
async function download(messageId: string) {
  const response = await fetch(new URL(`/api/v1/messages/${messageId}/file-attachment`, stage.operator.http.baseUrl), {
    headers: { authorization: `Bearer ${m.fullToken}` },
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  const header = response.headers.get('content-disposition') ?? '';
  return {
    header,
    contentType: response.headers.get('content-type'),
    name: parse(header).parameters.filename ?? '',
    fallback: parse(header, { extended: false }).parameters.filename ?? '',
  };
}

const extensionOf = (name: string) => name.slice(name.lastIndexOf('.') + 1).toLowerCase();

it(`stores and serves ${NAMES.length} hostile file names under names that cannot lie about the type`, async () => {
  let typed = 0;
  let hidden = 0;
  let exact = 0;
  for (const [sent, kind] of NAMES) {
    const type = TYPES[kind];
    const message = await createMessage(stage.operator, m);
    const version = await upload(message.id, sent, type.bytes(4096));
    const served = await download(message.id);
    const label = `${JSON.stringify(sent)} → ${JSON.stringify(version.fileName)} / ${served.header}`;
    expect(version.contentType, label).toBe(type.mime);
    expect(served.contentType, label).toBe(type.mime);
    expect(served.header, label).toMatch(/^attachment; [\x20-\x7e]+$/);
    expect(served.fallback, label).not.toMatch(/["\\%/]/);
    if (
      (type.extensions as readonly string[]).includes(extensionOf(version.fileName)) &&
      extensionOf(served.fallback) === extensionOf(version.fileName)
    )
      typed++;
    if (HIDDEN.test(version.fileName) || /[/\\]/.test(version.fileName)) hidden++;
    if (served.name === version.fileName) exact++;
  }
  expect(typed).toBe(NAMES.length);
  expect(hidden).toBe(0);
  expect(exact).toBe(NAMES.length);

  // Rows as an older release stored them (the name as sent, less its control characters), written past
  // the API: JSON keeps them, the download names them after the detected type.
  const LEGACY = ['poly.html', 'invoice\u061cfdp.exe', "o'brien.svg", 'notes'];
  let corrected = 0;
  for (const legacyName of LEGACY) {
    const message = await createMessage(stage.operator, m);
    await upload(message.id, 'first.pdf', pdfBytes(4096));
    await stage.rows(
      `insert into file_versions (tenant_id, owner_type, owner_id, version, blob_id, file_name, content_type, size_bytes, uploaded_at)
       select tenant_id, owner_type, owner_id, version + 1, blob_id, '${legacyName.replaceAll("'", "''")}', content_type, size_bytes, uploaded_at
       from file_versions where owner_id = '${message.id}' and version = 1`,
    );
    const read = await stage.operator.http.get(`/api/v1/messages/${message.id}`, { token: m.fullToken });
    expect(read.body.data.attributes.fileAttachment.versions.at(-1).fileName).toBe(legacyName);
    const served = await download(message.id);
    if (extensionOf(served.name) === 'pdf' && !HIDDEN.test(served.name)) corrected++;
  }
  expect(corrected).toBe(LEGACY.length);

  reportFigure(
    'file-names',
    `${NAMES.length} hostile names (bidi overrides and isolates, controls, other types' extensions, paths, quotes, non-ASCII): ` +
      `${typed}/${NAMES.length} stored and served ending in the detected type's extension, ${hidden} with hidden characters, ` +
      `${exact}/${NAMES.length} headers parsing back to the stored name; ${corrected}/${LEGACY.length} legacy names served corrected, JSON unchanged`,
  );
});
