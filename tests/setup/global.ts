/**
 * Runs once per test run and prepares a migrated template with no rows, which each test file copies into
 * a database of its own (tests/helpers/app.ts openTestDatabase), so that no file sees another's rows.
 * On PostgreSQL (TEST_DATABASE_URL) the template is the test database itself: migrated, emptied of what
 * runs before databases per file left in it, and then left alone (CREATE DATABASE … TEMPLATE refuses
 * while any session is connected to it); each file creates a copy (a few hundred ms) and drops it at
 * the end, and the teardown drops what a killed file left. On PGlite it migrates an embedded database
 * once (a copy of the build's template when it is current: embeddedToMigrate) and saves it to a file: each
 * test file then loads it (half a second) instead of creating and migrating a database of its own
 * (several seconds).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { type Kysely, sql } from 'kysely';
import type { TestProject } from 'vitest/node';
import { openPglite, openPostgres } from '../../src/db/database.js';
import type { Database } from '../../src/db/schema.js';
import {
  EMBEDDED_START_PARAMS,
  migrationsFingerprint,
  prepareDataDirectory,
  readTemplateManifest,
  templateUsable,
} from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { explainedPostgresFailure } from '../../src/db/postgres-unusable.js';
import { dropDatabase, onServer } from '../helpers/database-copies.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string | undefined;
    databaseUrl: string | undefined;
    /** Part of the name of every database copied in this run (PostgreSQL), for the teardown to find. */
    databaseRun: string | undefined;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (databaseUrl) {
    const database = openPostgres(databaseUrl, 2);
    try {
      // A server not running or a database not created yet (README: createdb … test) said as such, not as a stack.
      await migrateToLatest(database.db).catch((error: unknown) => {
        const explained = explainedPostgresFailure(databaseUrl, error, 'TEST_DATABASE_URL');
        throw explained ? new Error(explained.message) : error;
      });
      await emptyTables(database.db);
    } finally {
      // Closed before any file copies it.
      await database.close();
    }
    const run = `r${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
    project.provide('databaseUrl', databaseUrl);
    project.provide('databaseRun', run);
    project.provide('pgliteTemplate', undefined);
    return async () => {
      const left = await onServer<{ datname: string }>(
        databaseUrl,
        `select datname from pg_database where datname like '%\\_${run}\\_%'`,
      );
      for (const { datname } of left) await dropDatabase(databaseUrl, datname);
    };
  }
  const directory = mkdtempSync(path.join(os.tmpdir(), 'site-services-test-'));
  const database = openPglite(await embeddedToMigrate(directory));
  await migrateToLatest(database.db);
  const dump = await database.pglite!.dumpDataDir('none');
  await database.close();
  rmSync(path.join(directory, 'pgdata'), { recursive: true, force: true });
  const file = path.join(directory, 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  project.provide('databaseUrl', undefined);
  project.provide('databaseRun', undefined);
  // Tens of megabytes a run: removed when it ends, so that runs on one machine do not fill its disk.
  return async () => rmSync(directory, { recursive: true, force: true });
}

/**
 * The embedded database the template is made from: a copy of the build's migrated template in
 * `scratch`/pgdata (dist/pglite-template, what a first start of the service copies: src/db/embedded.ts)
 * when the build made it with this PGlite from these very migrations, unedited; otherwise PGlite
 * initialised in memory, which costs 4-5 s of CPU more. Either way migrateToLatest then applies the rest.
 */
async function embeddedToMigrate(scratch: string): Promise<PGlite> {
  const manifest = readTemplateManifest();
  if (!templateUsable(manifest) || manifest.fingerprint !== migrationsFingerprint()) return new PGlite();
  const { directory } = await prepareDataDirectory(scratch);
  return new PGlite(directory, { startParams: EMBEDDED_START_PARAMS });
}

/** Every table but the migrations' own, emptied (a no-op on a template that no run before wrote to). */
async function emptyTables(db: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select quote_ident(tablename) as name from pg_tables
    where schemaname = 'public' and tablename not like 'kysely\\_migration%'`.execute(db);
  if (rows.length > 0) await sql.raw(`truncate ${rows.map((row) => row.name).join(', ')} restart identity`).execute(db);
}
