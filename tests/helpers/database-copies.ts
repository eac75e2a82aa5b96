/**
 * Databases of their own on the PostgreSQL test server: each is a copy of the migrated test database
 * (TEST_DATABASE_URL, which tests/setup/global.ts prepares as the template and nothing else connects to),
 * named `<prefix>_<run>_<random>` so that the run's global teardown can drop what a killed file left.
 * Creating and dropping run on the server's maintenance database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface DatabaseCopy {
  url: string;
  drop(): Promise<void>;
}

/** The URL of another database on the same server. */
function urlOf(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Runs statements on the server's maintenance database (CREATE and DROP DATABASE cannot run in the target). */
export async function onServer<T extends pg.QueryResultRow>(serverUrl: string, ...statements: string[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: urlOf(serverUrl, 'postgres') });
  await client.connect();
  try {
    let rows: T[] = [];
    for (const statement of statements) rows = (await client.query<T>(statement)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await onServer(serverUrl, `drop database if exists ${identifier(name)} with (force)`);
}

/**
 * A new database copied from `templateUrl`'s, with its schema and rows. CREATE DATABASE refuses while any
 * other session is connected to the template, so nothing may stay connected to it.
 *
 * STRATEGY WAL_LOG (the default since PostgreSQL 15, written out because it was chosen): it copies the
 * template block by block through the WAL (8.6 MB with the system catalogues), while FILE_COPY copies the
 * files but forces a checkpoint before and after, whose cost grows with what the other files have written
 * meanwhile. On the 2-core test machine under load WAL_LOG created faster (psql, 6 each: 190–680 ms
 * against 1,040–1,880 ms; from Node, medians 1.1 against 1.6 s and 1.1 against 1.2 s): docs/decisions.md.
 */
export async function copyDatabase(templateUrl: string, prefix: string, run = ''): Promise<DatabaseCopy> {
  const name = [prefix, run || Date.now().toString(36), randomBytes(3).toString('hex')].join('_');
  await onServer(
    templateUrl,
    `create database ${identifier(name)} template ${identifier(databaseNameOf(templateUrl))} strategy wal_log`,
  );
  return { url: urlOf(templateUrl, name), drop: () => dropDatabase(templateUrl, name) };
}
