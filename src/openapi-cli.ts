/**
 * `npm run openapi [-- <directory>]`: writes the client document (openapi.json) and the operator document
 * (operator-openapi.json) to a directory (default ./openapi) without a server or a database: the app is
 * built on an empty in-memory PGlite that nothing queries, with throwaway keys. Servers and texts follow
 * the environment (PRODUCTION_BASE_URL, SANDBOX_BASE_URL, PROBLEM_BASE_URL, …), as a running service's do.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openPglite } from './db/database.js';
import { clientOpenApiDocument, operatorOpenApiDocument } from './http/openapi.js';
import { createLogger } from './lib/logger.js';
import { generateServerKeys } from './runtime/server-keys.js';

async function main(): Promise<void> {
  const directory = path.resolve(process.argv[2] ?? 'openapi');
  const config = { ...loadConfig(), logLevel: 'silent' };
  const database = openPglite(new PGlite());
  const app = await buildApp(config, { database, keys: generateServerKeys(config), logger: createLogger(config) });
  try {
    await app.ready();
    mkdirSync(directory, { recursive: true });
    for (const [file, document] of [
      ['openapi.json', clientOpenApiDocument(app)],
      ['operator-openapi.json', operatorOpenApiDocument(app)],
    ] as const) {
      writeFileSync(path.join(directory, file), `${JSON.stringify(document, null, 2)}\n`);
      process.stdout.write(`wrote ${path.join(directory, file)}\n`);
    }
  } finally {
    await app.close();
    await database.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
