/** Named prepared statements on PostgreSQL (src/db/prepared-statements.ts). */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { AppDatabase } from '../../src/db/database.js';
import { prepared } from '../../src/db/prepared-statements.js';
import { openTestDatabase } from '../helpers/app.js';

const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('prepared statements', () => {
  let database: AppDatabase;
  const table = `prepared_test_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    database = await openTestDatabase();
    await sql`create table ${sql.table(table)} (id int primary key)`.execute(database.db);
    await sql`insert into ${sql.table(table)} values (1)`.execute(database.db);
  });

  afterAll(async () => {
    await sql`drop table if exists ${sql.table(table)}`.execute(database.db);
    await database.close();
  });

  it('runs a marked statement under a name and leaves the others unnamed', async () => {
    // One connection throughout: each connection lists only its own prepared statements.
    await database.db.connection().execute(async (connection) => {
      const statements = async () =>
        (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(connection)).rows.map(
          (row) => row.statement,
        );
      const before = await statements();
      const marked = () =>
        sql<{ id: number }>`select id from ${sql.table(table)} where id = ${1} ${prepared()}`.execute(connection);
      expect((await marked()).rows).toEqual([{ id: 1 }]);
      expect((await marked()).rows).toEqual([{ id: 1 }]);
      await sql`select id from ${sql.table(table)} where id > ${0}`.execute(connection);
      const added = (await statements()).filter((statement) => !before.includes(statement));
      expect(added).toEqual([expect.stringMatching(/where id = \$1 \/\* prepared \*\/$/)]);
    });
  });

  it('describes a named statement once: later executions read their rows, and count them, with the shape learnt', async () => {
    const describes = vi.spyOn(
      (pg as unknown as { Connection: { prototype: { describe(): void } } }).Connection.prototype,
      'describe',
    );
    try {
      await database.db.connection().execute(async (connection) => {
        const read = () =>
          sql<{ id: number; big: number; doc: unknown; none: null }>`select id, 9007199254740991::int8 as big,
            '{"a":[1]}'::jsonb as doc, null::text as none from ${sql.table(table)} where id = ${1} ${prepared()}`.execute(
            connection,
          );
        const update = () =>
          sql`update ${sql.table(table)} set id = id where id = ${1} ${prepared()}`.execute(connection);
        const first = await read();
        const updated = await update();
        const describedFirst = describes.mock.calls.length;
        expect(describedFirst).toBe(2);
        expect((await read()).rows).toEqual(first.rows);
        expect(first.rows).toEqual([{ id: 1, big: 9007199254740991, doc: { a: [1] }, none: null }]);
        expect((await update()).numAffectedRows).toBe(1n);
        expect(updated.numAffectedRows).toBe(1n);
        expect(describes.mock.calls.length).toBe(describedFirst);
      });
    } finally {
      describes.mockRestore();
    }
  });

  it('prepares a `select *` again under a new name once a migration changed its result type', async () => {
    // One connection throughout, so that the statement is prepared where it fails.
    await database.db.connection().execute(async (connection) => {
      const everything = () => sql<{ id: number }>`select * from ${sql.table(table)} ${prepared()}`.execute(connection);
      expect((await everything()).rows).toEqual([{ id: 1 }]);
      await sql`alter table ${sql.table(table)} add column note text`.execute(connection);
      await expect(everything()).rejects.toMatchObject({ code: '0A000' });
      expect((await everything()).rows).toEqual([{ id: 1, note: null }]);
    });
  });
});
