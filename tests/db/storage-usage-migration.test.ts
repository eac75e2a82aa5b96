/**
 * Migration 0011 counts the file versions stored before it: each tenant's `file_storage_usage` starts at the
 * bytes its versions hold, so the storage limit applies to what a tenant uploaded before the upgrade too.
 * The migration's own statements are run again on a database put back as it was before them.
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
  await sql`drop table file_storage_usage`.execute(db);
  await sql`alter table tenants drop column storage_limit_mib`.execute(db);
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

  const usage = await db.selectFrom('file_storage_usage').selectAll().orderBy('tenant_id').execute();
  expect(usage).toEqual([{ tenant_id: 'tnt_a', bytes: 6_000_001_234 }]);
  const limits = await db
    .selectFrom('tenants')
    .select(['id', 'storage_limit_mib'])
    .where('id', 'in', ['tnt_a', 'tnt_b'])
    .execute();
  expect(limits.map((row) => row.storage_limit_mib)).toEqual([10240, 10240]);
});
