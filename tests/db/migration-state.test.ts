/**
 * The start's shortcut past Kysely's Migrator (src/db/migrate.ts): what is pending is read from
 * kysely_migration; an up-to-date database costs no Migrator run, and so does one a newer release migrated
 * (served as it is; the Migrator would refuse it), while one that also lacks migrations of this release is
 * refused. On a database of its own.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrationState } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { openEmptyDatabase } from '../helpers/app.js';

describe('migration state', () => {
  let empty: Awaited<ReturnType<typeof openEmptyDatabase>>;
  const last = Object.keys(migrations).at(-1)!;

  beforeAll(async () => {
    empty = await openEmptyDatabase('ss_migration_state');
  });

  afterAll(async () => {
    await empty?.drop();
  });

  it('a migrated database has nothing pending and nothing unknown: migrateToLatest applies nothing', async () => {
    expect(await migrationState(empty.database.db)).toEqual({ pending: [], unknown: [] });
    expect(await migrateToLatest(empty.database.db)).toEqual([]);
  });

  it('names a migration whose record is missing as pending', async () => {
    const { db } = empty.database;
    const row = await sql<{ timestamp: string }>`select timestamp from kysely_migration where name = ${last}`.execute(
      db,
    );
    await sql`delete from kysely_migration where name = ${last}`.execute(db);
    try {
      expect(await migrationState(db)).toEqual({ pending: [last], unknown: [] });
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${last}, ${row.rows[0]!.timestamp})`.execute(db);
    }
  });

  it('a database a newer release migrated is served as it is: its migrations are unknown, migrateToLatest applies nothing', async () => {
    // A rolling upgrade migrates first (docs/deployment.md): an old process restarting mid-roll must start.
    const { db } = empty.database;
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', ${new Date().toISOString()})`.execute(
      db,
    );
    try {
      expect(await migrationState(db)).toEqual({ pending: [], unknown: ['9999_from_the_future'] });
      expect(await migrateToLatest(db)).toEqual([]);
    } finally {
      await sql`delete from kysely_migration where name = '9999_from_the_future'`.execute(db);
    }
  });

  it('one with unknown migrations that lacks some of this release is refused, naming both', async () => {
    const { db } = empty.database;
    const row = await sql<{ timestamp: string }>`select timestamp from kysely_migration where name = ${last}`.execute(
      db,
    );
    await sql`delete from kysely_migration where name = ${last}`.execute(db);
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', ${new Date().toISOString()})`.execute(
      db,
    );
    try {
      await expect(migrateToLatest(db)).rejects.toThrow(new RegExp(`9999_from_the_future.*${last}`));
    } finally {
      await sql`delete from kysely_migration where name = '9999_from_the_future'`.execute(db);
      await sql`insert into kysely_migration (name, timestamp) values (${last}, ${row.rows[0]!.timestamp})`.execute(db);
    }
  });
});
