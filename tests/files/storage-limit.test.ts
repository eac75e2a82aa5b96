/**
 * A tenant's uploaded files are bounded in all (storageLimitMiB, the operator's per tenant, 10 GiB by
 * default): every version of every file is kept, so without it a tenant could fill the disk at the rate
 * limit's pace. An upload that would pass the limit is 422 storage-limit-reached and leaves nothing stored;
 * at the limit, uploads are refused before their body is read; concurrent uploads are counted one after the
 * other; other tenants are not affected; the operator's raise lets uploads through again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { attachmentPath, createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { expectProblem } from '../helpers/problems.js';
import { admin } from '../helpers/tenants.js';
import { createVisit } from '../helpers/visits.js';

const MIB = 1024 * 1024;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

function upload(m: MessageTenant, path: string, bytes: number) {
  return t.http.post(path, {
    token: m.token,
    body: fileForm(pdfBytes(bytes), 'label.pdf'),
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
}

const setLimit = (tenantId: string, storageLimitMiB: number) =>
  admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}`, { storageLimitMiB });

async function blobCount(tenantId: string): Promise<number> {
  const rows = await t.database.db.selectFrom('file_blobs').select('id').where('tenant_id', '=', tenantId).execute();
  return rows.length;
}

/** A tenant whose files may hold 10 MiB, and the upload paths of a visit's return label and a message's attachment. */
async function smallTenant() {
  const m = await messageTenant(t);
  expect((await setLimit(m.tenantId, 10)).body.data.storageLimitMiB).toBe(10);
  const label = `/api/v1/site-visits/${(await createVisit(t, m)).id}/return-label`;
  const attachment = attachmentPath((await createMessage(t, m)).id);
  return { m, label, attachment };
}

function expectLimitReached(response: Awaited<ReturnType<typeof upload>>, usedBytes: number) {
  expectProblem(response, 422, 'storage-limit-reached', ['file']);
  expect(response.body).toMatchObject({ storageLimitBytes: 10 * MIB, storageUsedBytes: usedBytes });
  expect(response.text.length).toBeLessThan(1000);
}

describe('storage limit', () => {
  it('counts every version of every file; the upload that would pass the limit is refused and nothing of it is kept', async () => {
    const { m, label, attachment } = await smallTenant();
    expect((await upload(m, label, 4 * MIB)).status).toBe(201);
    expect((await upload(m, attachment, 4 * MIB)).status).toBe(201);
    const blobs = await blobCount(m.tenantId);

    // 8 MiB used: a third file of 4 MiB (another version of the label) would make 12.
    expectLimitReached(await upload(m, label, 4 * MIB), 8 * MIB);
    expect(await blobCount(m.tenantId)).toBe(blobs);
    const visit = await t.http.get(label.slice(0, label.lastIndexOf('/')), { token: m.token });
    expect(visit.body.data.attributes.returnLabel.versions).toHaveLength(1);

    // Exactly up to the limit is allowed; then nothing more, refused before the body is read.
    expect((await upload(m, label, 2 * MIB)).status).toBe(201);
    expectLimitReached(await upload(m, attachment, 64), 10 * MIB);
    // The operator sees what the tenant's files hold.
    const seen = await admin(t, 'GET', `/admin/v1/tenants/${m.tenantId}`);
    expect(seen.body.data).toMatchObject({ storageLimitMiB: 10, storageUsedBytes: 10 * MIB });
    // Another tenant's uploads are not held back.
    const other = await smallTenant();
    expect((await upload(other.m, other.label, 64)).status).toBe(201);

    // The operator raises the limit: uploads go through again.
    await setLimit(m.tenantId, 20);
    expect((await upload(m, attachment, 4 * MIB)).status).toBe(201);
  });

  it('concurrent uploads are counted one after the other: of three 4 MiB files under a 10 MiB limit, two are kept', async () => {
    const { m, label, attachment } = await smallTenant();
    const other = `/api/v1/site-visits/${(await createVisit(t, m)).id}/return-label`;
    const responses = await Promise.all([label, attachment, other].map((path) => upload(m, path, 4 * MIB)));
    expect(responses.map((response) => response.status).sort()).toEqual([201, 201, 422]);
    expect(await blobCount(m.tenantId)).toBe(2);
  });

  it('a lowered limit keeps what the tenant has and refuses new uploads until raised', async () => {
    const { m, label, attachment } = await smallTenant();
    await setLimit(m.tenantId, 20);
    expect((await upload(m, label, 8 * MIB)).status).toBe(201);
    expect((await upload(m, attachment, 8 * MIB)).status).toBe(201);
    await setLimit(m.tenantId, 10);
    expectLimitReached(await upload(m, attachment, 64), 16 * MIB);
    const download = await fetch(`${t.baseUrl}${label}`, { headers: { authorization: `Bearer ${m.token}` } });
    expect(download.status).toBe(200);
    await download.arrayBuffer();
  });
});
