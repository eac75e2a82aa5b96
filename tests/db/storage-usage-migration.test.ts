/**
 * Migration 0011 counts the file versions stored before it: each tenant's `storage_used_bytes` starts at the
 * bytes its versions hold (0 without any), so the storage limit applies to what a tenant uploaded before the
 * upgrade too. The migration's own statements are run again on a database put back as it was before them.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { up } from '../../src/db/migrations/0011_tenant_storage.js';
import { openEmptyDatabase } from '../helpers/app.js';

let empty: Awaited<ReturnType<typeof openEmptyDatabase>>;
beforeAll(async () => {
  empty = await openEmptyDatabase('ss_storage_usage');
});
afterAll(async () => empty?.drop());

it('starts each tenant at the bytes of the versions it has, and every tenant at the default limit', async () => {
  const { db } = empty.database;
  await sql`alter table tenants drop column storage_limit_mib, drop column storage_used_bytes`.execute(db);
  await sql`insert into tenants (id, name, scopes) values ('tnt_a', 'A', '{}'), ('tnt_b', 'B', '{}')`.execute(db);
  await sql`insert into file_blobs (id, tenant_id) values ('blob_1', 'tnt_a'), ('blob_2', 'tnt_a'), ('blob_3', 'tnt_a')`.execute(
    db,
  );
  // Above 2^32 in all: the count is a bigint.
  await sql`
    insert into file_versions (tenant_id, owner_type, owner_id, version, blob_id, file_name, content_type, size_bytes, uploaded_at)
    values ('tnt_a', 'x', 'o1', 1, 'blob_1', 'a.pdf', 'application/pdf', 3000000000, now()),
           ('tnt_a', 'x', 'o1', 2, 'blob_2', 'a.pdf', 'application/pdf', 3000000000, now()),
           ('tnt_a', 'y', 'o2', 1, 'blob_3', 'b.pdf', 'application/pdf', 1234, now())`.execute(db);

  await up(db as never);

  const tenants = await db
    .selectFrom('tenants')
    .select(['id', 'storage_limit_mib', 'storage_used_bytes'])
    .where('id', 'in', ['tnt_a', 'tnt_b'])
    .orderBy('id')
    .execute();
  expect(tenants).toEqual([
    { id: 'tnt_a', storage_limit_mib: 10240, storage_used_bytes: 6_000_001_234 },
    { id: 'tnt_b', storage_limit_mib: 10240, storage_used_bytes: 0 },
  ]);
});
