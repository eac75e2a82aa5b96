/**
 * Boots the real application for a test file: its own database (a copy of the migrated template, on
 * PGlite or PostgreSQL), fresh in-memory keys, listening on an ephemeral port.
 */
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type Config, configWith } from '../../src/config.js';
import { type AppDatabase, openPglite, openPostgres } from '../../src/db/database.js';
import { EMBEDDED_START_PARAMS } from '../../src/db/embedded.js';
import { clientOpenApiDocument, operatorOpenApiDocument } from '../../src/http/openapi.js';
import type { Api } from '../../src/http/types.js';
import { type Clock, systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Resolver } from '../../src/modules/outbox/resolvers.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { generateServerKeys, type ServerKeys } from '../../src/runtime/server-keys.js';
import { ContractChecker } from './contract.js';
import { copyDatabase } from './database-copies.js';
import { HttpClient, type ResponseHook } from './http.js';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  keys: ServerKeys;
  database: AppDatabase;
  baseUrl: string;
  /** Checks every response from the client API and the operator API against its OpenAPI document (contract.ts). */
  http: HttpClient;
  adminToken: string;
  /** The app's metrics; test workers count their attempts there too. */
  metrics: Metrics;
  /** The app's logger (the injected one, if any); test workers log there too. */
  logger: Logger;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: Partial<Config>;
  clock?: Clock;
  /** Reuse a database (e.g. to boot a second app on the same data); closed by its owner. */
  database?: AppDatabase;
  keys?: ServerKeys;
  /** Runs after buildApp and before listening: a test may add routes (documented like any other). */
  configure?: (app: Api) => void | Promise<void>;
  /** DNS of the webhook destination policy. */
  resolver?: Resolver;
  /** How long a refused upload's connection lingers after its answer (lingering-close.ts's LINGER_MS). */
  lingerMs?: number;
  /** A logger of the test's own (to inspect what is logged). */
  logger?: Logger;
}

/**
 * A database of its own for a test file (or a test app that owns its database), with the schema and no
 * rows: a PGlite copy of the migrated template, or on PostgreSQL a database created from the template
 * (helpers/database-copies.ts) and dropped when closed.
 */
export async function openTestDatabase(prefix = 'ss_file', poolSize = 5): Promise<AppDatabase> {
  const url = inject('databaseUrl');
  if (url) {
    const copy = await copyDatabase(url, prefix, inject('databaseRun'));
    const database = openPostgres(copy.url, poolSize);
    let closed: Promise<void> | undefined;
    const close = async () => {
      await database.close();
      await copy.drop();
    };
    return { ...database, close: () => (closed ??= close()) };
  }
  const template = inject('pgliteTemplate');
  if (!template) throw new Error('global setup did not provide a database');
  // The start-up parameters of the service's own embedded database (its smaller buffer cache starts faster).
  const pglite = new PGlite({ loadDataDir: templateTarball(template), startParams: EMBEDDED_START_PARAMS });
  await pglite.waitReady;
  return openPglite(pglite);
}

/**
 * The migrated template as PGlite loads it, its bytes read once per worker (files share their worker's
 * modules: vitest.config.ts). PGlite only asks a tarball for arrayBuffer() and copies every file out of
 * it, so one buffer serves every copy. A plain Blob of the file cost each test file about 0.6 s of CPU
 * (Node copies 40 MB into it and back out through its stream reader) and 1.5 s under load.
 */
class TemplateTarball extends Blob {
  readonly #bytes: ArrayBuffer;

  constructor(bytes: ArrayBuffer) {
    super([], { type: 'application/x-tar' });
    this.#bytes = bytes;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#bytes);
  }
}

const templateBytes = new Map<string, ArrayBuffer>();

function templateTarball(file: string): Blob {
  let bytes = templateBytes.get(file);
  if (!bytes) {
    const contents = readFileSync(file);
    bytes = contents.buffer.slice(contents.byteOffset, contents.byteOffset + contents.byteLength) as ArrayBuffer;
    templateBytes.set(file, bytes);
  }
  return new TemplateTarball(bytes);
}

/** The connection string of a database on PostgreSQL (for a second pool or a client of its own). */
export function databaseUrlOf(database: AppDatabase): string | undefined {
  return database.pool?.options.connectionString;
}

/**
 * A database of its own with the schema and no rows, for tests that need its URL (a process of their
 * own, sandbox provisioning): openTestDatabase's, with its connection string on PostgreSQL.
 */
export async function openEmptyDatabase(
  prefix = 'ss_empty',
): Promise<{ database: AppDatabase; url: string | undefined; drop(): Promise<void> }> {
  const database = await openTestDatabase(prefix);
  return { database, url: databaseUrlOf(database), drop: () => database.close() };
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return configWith({
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Tests make many requests from 127.0.0.1; the rate-limit tests set their own limit.
    rateLimitPerMinute: 1_000_000,
    // Tests open many connections from 127.0.0.1 at once; the connection cap's test sets its own.
    connectionsPerAddress: 1_000_000,
    // Tests send wrong operator tokens on purpose; the operator throttle's test sets its own limit.
    adminAuthFailuresPerMinute: 1_000_000,
    ...overrides,
  });
}

/**
 * The operator API's responses checked against its own document, built at the first operator response (most
 * test files make none). Without the operator API its paths are 404s of the client document's kind.
 */
function operatorContractHook(app: FastifyInstance, operatorApi: boolean): ResponseHook {
  let checker: ContractChecker | undefined;
  return (request, response) => {
    if (!operatorApi || !request.path.startsWith(OPERATOR_PREFIX)) return;
    // The operator's document does not list itself (tests/openapi/document.test.ts).
    if (request.path.split('?')[0] === `${OPERATOR_PREFIX}openapi.json`) return;
    checker ??= new ContractChecker(operatorOpenApiDocument(app), OPERATOR_PREFIX);
    checker.hook(request, response);
  };
}

const OPERATOR_PREFIX = '/admin/v1/';

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options.config);
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? (await openTestDatabase());
  const keys = options.keys ?? generateServerKeys(config);
  const metrics = new Metrics({ database, clock: options.clock ?? systemClock });
  const logger = options.logger ?? createLogger(config);
  const app = await buildApp(config, {
    database,
    keys,
    logger,
    metrics,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(options.lingerMs ? { lingerMs: options.lingerMs } : {}),
  });
  await options.configure?.(app as unknown as Api);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  return {
    app,
    config,
    keys,
    database,
    baseUrl,
    http: new HttpClient(baseUrl, [
      new ContractChecker(clientOpenApiDocument(app)).hook,
      operatorContractHook(app, keys.adminToken !== undefined),
    ]),
    adminToken: keys.adminToken!,
    metrics,
    logger,
    async close() {
      await app.close();
      if (ownsDatabase) await database.close();
    },
  };
}
