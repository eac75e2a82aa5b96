/**
 * Opens the service's database: PostgreSQL through a connection pool when DATABASE_URL is set,
 * otherwise PGlite (PostgreSQL compiled to WASM) in DATA_DIR. Both speak the same SQL dialect,
 * so everything above this file is written once.
 */
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import { EMBEDDED_START_PARAMS, prepareDataDirectory } from './embedded.js';
import { DataDirectoryInUseError, lockDataDirectory } from './embedded-lock.js';
import { explainedPostgresFailure, PostgresUnusable } from './postgres-unusable.js';
import { PreparedNames, preparingPool } from './prepared-statements.js';
import { parseTimestamptz } from './timestamps.js';
import { discardingTimedOutConnections } from './timed-out-connections.js';
import { batchTurnsOf } from './turn-batches.js';
import {
  defaultConnectionsPerTenant,
  defaultSharedLimit,
  shareConnectionsOf,
  type TenantShareOptions,
  TenantShares,
} from './tenant-shares.js';
import type { Database } from './schema.js';

export type DatabaseKind = 'postgres' | 'pglite';

export interface AppDatabase {
  readonly db: Kysely<Database>;
  readonly kind: DatabaseKind;
  /** The pool behind a PostgreSQL database (for LISTEN/NOTIFY and pool metrics). */
  readonly pool: pg.Pool | undefined;
  /** The PGlite instance behind an embedded database. */
  readonly pglite: PGlite | undefined;
  close(): Promise<void>;
}

/**
 * int8 values (identity columns, counts) fit in a JS number here; parse them as numbers on pg too.
 * timestamptz values keep PostgreSQL's text for their ISO form (timestamps.ts).
 */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 && format !== 'binary') return (value: string) => Number(value);
    if (oid === pg.types.builtins.TIMESTAMPTZ && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format);
  },
};

/** How long a request may wait for a pooled connection (or a new one to be established). */
export const CONNECT_TIMEOUT_MS = 5_000;

/** DATABASE_STATEMENT_TIMEOUT_MS's default, for pools opened without a configuration (tests, tools). */
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * How long the client waits for any answer to a query: a little longer than the statement timeout, so
 * that a database which is merely slow is cancelled by PostgreSQL (57014) first, and only one that does
 * not answer at all (hung, frozen, a network path that drops packets) is given up on by the client.
 */
export function clientQueryTimeoutMs(statementTimeoutMs: number): number {
  return statementTimeoutMs + Math.max(1_000, Math.round(statementTimeoutMs / 10));
}

export function createPostgresPool(
  connectionString: string,
  max: number,
  statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    types: pgTypes as pg.CustomTypesConfig,
    // Fail fast when the database is unreachable instead of queueing requests forever.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    // A statement that runs this long is a bug or an outage (a lock held elsewhere counts too: waiting for
    // it is part of the statement's time); end it so that the request can answer 503.
    statement_timeout: statementTimeoutMs,
    // A database that accepts the query and never answers is not bound by its own statement_timeout;
    // the connection such a query was sent on is then discarded (see timed-out-connections.ts).
    query_timeout: clientQueryTimeoutMs(statementTimeoutMs),
    keepAlive: true,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  // Nor a checked-out one: the pool removes its own error listener while a client is lent out, so a
  // connection lost between two statements of a transaction would be an unhandled 'error' event. With
  // this listener the client is just broken: its next query fails (503) and the pool discards it.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** The handles whose AppDatabase has begun to close: what fails on one of them then fails because it is stopping. */
const closingHandles = new WeakSet<Kysely<Database>>();

/**
 * Whether `db`'s AppDatabase is closing (or closed): a query that fails on it then is part of stopping,
 * not an outage. Keyed by the handle, not the AppDatabase, so that copies of one (`{ ...database }`) agree.
 */
export function isClosing(db: Kysely<Database>): boolean {
  return closingHandles.has(db);
}

function closerOf(db: Kysely<Database>): () => Promise<void> {
  return () => {
    closingHandles.add(db);
    return db.destroy();
  };
}

/**
 * PostgreSQL through a pool of `max` connections, of which one tenant's requests hold at most
 * `shares.perTenant` at once (tenant-shares.ts; by default half of them, waited for at most the connect timeout), and
 * the tenants' second and later requests together leave a quarter of the pool to the others (`defaultSharedLimit`).
 */
export function openPostgres(
  connectionString: string,
  max: number,
  statementTimeoutMs?: number,
  shares: Partial<TenantShareOptions> = {},
): AppDatabase {
  const pool = createPostgresPool(connectionString, max, statementTimeoutMs);
  const names = new PreparedNames(pgTypes);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: discardingTimedOutConnections(preparingPool(pool, names)) }),
  });
  batchTurnsOf(db, pool, names);
  const perTenant = shares.perTenant ?? defaultConnectionsPerTenant(max);
  shareConnectionsOf(
    db,
    new TenantShares({
      perTenant,
      waitMs: shares.waitMs ?? CONNECT_TIMEOUT_MS,
      sharedLimit: defaultSharedLimit(max, perTenant),
    }),
  );
  return { db, kind: 'postgres', pool, pglite: undefined, close: closerOf(db) };
}

export function openPglite(pglite: PGlite): AppDatabase {
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return { db, kind: 'pglite', pool: undefined, pglite, close: closerOf(db) };
}

/** PGlite's failure without the advice of its WebAssembly build ("Build with -sASSERTIONS for more info."). */
function pgliteFailure(cause: unknown): string {
  return ((cause as Error)?.message ?? String(cause)).replace(/\.? Build with -sASSERTIONS for more info\.?$/, '');
}

/**
 * An embedded database PGlite could not open. PGlite reports it as a bare "Aborted()" (PostgreSQL's PANIC,
 * such as a missing checkpoint, goes to no log) or "failed to initialize": this says what the operator can do.
 */
export class EmbeddedDatabaseUnreadable extends Error {
  constructor(
    readonly directory: string,
    cause: unknown,
  ) {
    super(
      `the embedded database in ${directory} could not be opened (PGlite: ${pgliteFailure(cause)}): ` +
        'its files are damaged (two processes wrote them, a full disk, a copy made while it was open) or are not a ' +
        `PGlite database of this version. Keep a copy of ${directory}, then move it away and start again for a new ` +
        'database (in the sandbox, with a new demo tenant and credentials).',
      { cause },
    );
    this.name = 'EmbeddedDatabaseUnreadable';
  }
}

/**
 * A failure to open the database whose message says what the operator can do about it: a start and
 * `npm run migrate` print it as it is, without a stack.
 */
export function isExplainedOpeningFailure(
  error: unknown,
): error is DataDirectoryInUseError | EmbeddedDatabaseUnreadable | PostgresUnusable {
  return (
    error instanceof DataDirectoryInUseError ||
    error instanceof EmbeddedDatabaseUnreadable ||
    error instanceof PostgresUnusable
  );
}

/**
 * PostgreSQL opened and asked once, so that a server that is not there, a database that does not exist or a
 * refused user is said as such (PostgresUnusable) rather than as the first migration query's stack trace.
 */
async function openReachablePostgres(url: string, config: Config): Promise<AppDatabase> {
  const database = openPostgres(url, config.databasePoolSize, config.databaseStatementTimeoutMs, {
    perTenant: config.databaseConnectionsPerTenant,
  });
  try {
    await database.pool!.query('SELECT 1');
  } catch (error) {
    await database.close().catch(() => undefined);
    throw explainedPostgresFailure(url, error) ?? error;
  }
  return database;
}

/** Opens the configured database; `progress` hears what a first start of the embedded one does. */
export async function openDatabase(
  config: Config,
  progress: (line: string) => void = () => undefined,
): Promise<AppDatabase> {
  if (config.databaseUrl) return openReachablePostgres(config.databaseUrl, config);
  // Before anything touches DATA_DIR: a second process on an open embedded database would damage it.
  const lock = await lockDataDirectory(config.dataDir);
  try {
    const { directory, origin } = await prepareDataDirectory(config.dataDir);
    if (origin === 'template')
      progress(`created the embedded database in ${directory} from the build's migrated template`);
    if (origin === 'initialised')
      progress(`initialising the embedded database in ${directory} (no usable template in dist/: this takes a while)`);
    const pglite = new PGlite(directory, { startParams: EMBEDDED_START_PARAMS });
    await pglite.waitReady.catch((error: unknown) => {
      throw new EmbeddedDatabaseUnreadable(directory, error);
    });
    const database = openPglite(pglite);
    return {
      ...database,
      close: async () => {
        await database.close();
        await lock.release();
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}
