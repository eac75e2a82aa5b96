/**
 * Both OpenAPI documents without a server or a database: the app is built on an empty in-memory PGlite
 * that nothing queries, with throwaway keys. Used by `npm run openapi` and by the client package's type
 * generator (packages/client/scripts/generate-types.ts).
 */
import { PGlite } from '@electric-sql/pglite';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { openPglite } from './db/database.js';
import { clientOpenApiDocument, operatorOpenApiDocument } from './http/openapi.js';
import type { OpenApiDocument } from './http/openapi.js';
import { createLogger } from './lib/logger.js';
import { generateServerKeys } from './runtime/server-keys.js';

export async function buildOpenApiDocuments(
  config: Config,
): Promise<{ client: OpenApiDocument; operator: OpenApiDocument }> {
  const quiet = { ...config, logLevel: 'silent' };
  const database = openPglite(new PGlite());
  const app = await buildApp(quiet, { database, keys: generateServerKeys(quiet), logger: createLogger(quiet) });
  try {
    await app.ready();
    return { client: clientOpenApiDocument(app), operator: operatorOpenApiDocument(app) };
  } finally {
    await app.close();
    await database.close();
  }
}
