/**
 * Runs once per test run. On PostgreSQL (TEST_DATABASE_URL) it migrates the test database. On PGlite
 * it migrates a fresh embedded database once and saves it as a template: each test file then loads the
 * template (half a second) instead of creating and migrating a database of its own (several seconds).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openPglite, openPostgres } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string | undefined;
    databaseUrl: string | undefined;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (databaseUrl) {
    const database = openPostgres(databaseUrl, 2);
    await migrateToLatest(database.db);
    await database.close();
    project.provide('databaseUrl', databaseUrl);
    project.provide('pgliteTemplate', undefined);
    return;
  }
  const database = openPglite(new PGlite());
  await migrateToLatest(database.db);
  const dump = await database.pglite!.dumpDataDir('none');
  await database.close();
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'site-services-test-')), 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  project.provide('databaseUrl', undefined);
}
