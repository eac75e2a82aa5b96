import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { DatabaseFileStore } from '../../src/modules/files/database-store.js';
import { Maintenance } from '../../src/runtime/maintenance.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { createVisit, visitTenant } from '../helpers/visits.js';

const DAY = 24 * 3600 * 1000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function* bytes(size: number) {
  yield pdfBytes(size);
}

it('the maintenance loop deletes blobs left without a version for a day, and only those', async () => {
  const v = await visitTenant(t);
  const visit = await createVisit(t, v);
  const upload = await t.http.post(`/api/v1/site-visits/${visit.id}/return-label`, {
    token: v.token,
    body: fileForm(pdfBytes(300_000)),
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
  expect(upload.status).toBe(201);

  // What a crash in the middle of an upload leaves: blobs with chunks and no version. The test database
  // may be shared with other test files, so the clock is far in the past: nothing of theirs is that old.
  const clock = new ManualClock(new Date('2000-01-01T00:00:00Z'));
  const store = new DatabaseFileStore(t.database, clock);
  const old = await store.put(v.tenantId, bytes(300_000));
  clock.advance(DAY + 1000);
  const young = await store.put(v.tenantId, bytes(1000));

  await new Maintenance(t.database.db, clock, createLogger(t.config)).runOnce();

  const blobs = (
    await t.database.db.selectFrom('file_blobs').select('id').where('tenant_id', '=', v.tenantId).execute()
  ).map((blob) => blob.id);
  expect(blobs).toHaveLength(2);
  expect(blobs).toContain(young.blobId);
  expect(blobs).not.toContain(old.blobId);
  expect(
    await t.database.db.selectFrom('file_chunks').select('ordinal').where('blob_id', '=', old.blobId).execute(),
  ).toEqual([]);
  const download = await t.http.get(`/api/v1/site-visits/${visit.id}/return-label`, { token: v.token });
  expect(download.status).toBe(200);
  expect(download.text.length).toBe(300_000);
});

it('each pass after the first looks only at blobs dated from where the last one stopped (less an hour)', async () => {
  const v = await visitTenant(t);
  const clock = new ManualClock(new Date('2001-01-01T00:00:00Z'));
  const store = new DatabaseFileStore(t.database, clock);
  const maintenance = new Maintenance(t.database.db, clock, createLogger(t.config));
  const first = await store.put(v.tenantId, bytes(1000));
  clock.advance(DAY + 1000);
  await maintenance.runOnce();

  // Dated two hours before the first pass's limit (a clock far behind): behind where the next pass looks.
  const behind = await new DatabaseFileStore(
    t.database,
    new ManualClock(new Date(clock.now().getTime() - DAY - 2 * 3600_000)),
  ).put(v.tenantId, bytes(1000));
  const later = await store.put(v.tenantId, bytes(1000));
  clock.advance(DAY + 1000);
  await maintenance.runOnce();

  const left = (
    await t.database.db.selectFrom('file_blobs').select('id').where('tenant_id', '=', v.tenantId).execute()
  ).map((blob) => blob.id);
  expect(left).not.toContain(first.blobId);
  expect(left).not.toContain(later.blobId);
  expect(left).toEqual([behind.blobId]);
  // A process's first pass looks at every blob.
  await new Maintenance(t.database.db, clock, createLogger(t.config)).runOnce();
  expect(
    await t.database.db.selectFrom('file_blobs').select('id').where('tenant_id', '=', v.tenantId).execute(),
  ).toEqual([]);
});
