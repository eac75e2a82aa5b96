/**
 * Global setup of the reliability run: a fresh PostgreSQL database of its own (`ss_rel_run_…`), migrated,
 * handed to the suites as `databaseUrl` (the same key the main suite's helpers read), and dropped at the
 * end. The server comes from RELIABILITY_POSTGRES_URL (default: the local cluster, user postgres).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../../../src/db/database.js';
import { migrateToLatest } from '../../../src/db/migrate.js';

export const POSTGRES_SERVER_URL =
  process.env.RELIABILITY_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function onServer(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const name = `ss_rel_run_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await onServer(`create database ${name}`);
  const url = new URL(POSTGRES_SERVER_URL);
  url.pathname = `/${name}`;
  const database = openPostgres(url.toString(), 2);
  await migrateToLatest(database.db);
  await database.close();
  project.provide('databaseUrl', url.toString());
  project.provide('pgliteTemplate', undefined);
  return () => onServer(`drop database if exists ${name} with (force)`);
}
