/**
 * A file keeps at most MAX_FILE_VERSIONS versions: every version is listed wherever its owner is served, so
 * an owner's representation (and each upload's answer) must not grow without end with tiny uploads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_VERSIONS } from '../../src/modules/files/limits.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { attachmentPath, createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes, pngBytes } from '../helpers/multipart.js';
import { expectProblem } from '../helpers/problems.js';
import { createVisit } from '../helpers/visits.js';

let t: TestApp;
let m: MessageTenant;
beforeAll(async () => {
  t = await startTestApp();
  m = await messageTenant(t);
});
afterAll(async () => t?.close());

function upload(path: string, form: Buffer) {
  return t.http.post(path, { token: m.token, body: form, headers: { 'content-type': MULTIPART_CONTENT_TYPE } });
}

async function blobCount(): Promise<number> {
  const rows = await t.database.db.selectFrom('file_blobs').select('id').where('tenant_id', '=', m.tenantId).execute();
  return rows.length;
}

/** Uploads `count` small versions one after the other. */
async function uploadVersions(path: string, count: number, form: Buffer) {
  for (let index = 0; index < count; index++) expect((await upload(path, form)).status).toBe(201);
}

describe.each([
  { owner: 'a return label', path: async () => `/api/v1/site-visits/${(await createVisit(t, m)).id}/return-label` },
  { owner: 'a message attachment', path: async () => attachmentPath((await createMessage(t, m)).id) },
])('$owner', ({ path: ownerPath }) => {
  it(`takes ${MAX_FILE_VERSIONS} versions, then refuses the next with a bounded 422 and keeps nothing of it`, async () => {
    const path = await ownerPath();
    const ownerUrl = path.slice(0, path.lastIndexOf('/'));
    const name = `${'n'.repeat(196)}.pdf`;
    await uploadVersions(path, MAX_FILE_VERSIONS, fileForm(pdfBytes(64), name));
    const before = await t.http.get(ownerUrl, { token: m.token });
    const blobs = await blobCount();

    const refused = await upload(path, fileForm(pdfBytes(64), name));
    expect(expectProblem(refused, 422, 'file-version-limit-reached', ['file']).file).toEqual([
      `at most ${MAX_FILE_VERSIONS} versions may be uploaded`,
    ]);
    // Refused before the file is judged: content that would be a 415 gets the same answer.
    expectProblem(
      await upload(path, fileForm(Buffer.from('plain text'), 'a.txt', 'text/plain')),
      422,
      'file-version-limit-reached',
    );
    expect(refused.text.length).toBeLessThan(1000);

    const after = await t.http.get(ownerUrl, { token: m.token });
    expect(after.body.data.meta.version).toBe(before.body.data.meta.version);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    const attribute = path.endsWith('return-label') ? 'returnLabel' : 'fileAttachment';
    expect(after.body.data.attributes[attribute].versions).toHaveLength(MAX_FILE_VERSIONS);
    expect(await blobCount()).toBe(blobs);

    const download = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${m.token}` } });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(pdfBytes(64));
  });
});

it('two uploads racing for the last version: one is stored, the other refused, and its blob removed', async () => {
  const path = attachmentPath((await createMessage(t, m)).id);
  await uploadVersions(path, MAX_FILE_VERSIONS - 1, fileForm(pngBytes(64), 'a.png', 'image/png'));
  const blobs = await blobCount();
  const answers = await Promise.all([
    upload(path, fileForm(pngBytes(300_000), 'b.png', 'image/png')),
    upload(path, fileForm(pngBytes(300_000), 'c.png', 'image/png')),
  ]);
  expect(answers.map((answer) => answer.status).sort()).toEqual([201, 422]);
  expect(await blobCount()).toBe(blobs + 1);
});
