/**
 * `npm run openapi [-- <directory>]`: writes the client document (openapi.json) and the operator document
 * (operator-openapi.json) to a directory (default ./openapi) without a server or a database. Servers and
 * texts follow the environment (PRODUCTION_BASE_URL, SANDBOX_BASE_URL, PROBLEM_BASE_URL, …), as a running
 * service's do.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { buildOpenApiDocuments } from './openapi-documents.js';

async function main(): Promise<void> {
  const directory = path.resolve(process.argv[2] ?? 'openapi');
  const documents = await buildOpenApiDocuments(loadConfig());
  mkdirSync(directory, { recursive: true });
  for (const [file, document] of [
    ['openapi.json', documents.client],
    ['operator-openapi.json', documents.operator],
  ] as const) {
    writeFileSync(path.join(directory, file), `${JSON.stringify(document, null, 2)}\n`);
    process.stdout.write(`wrote ${path.join(directory, file)}\n`);
  }
}

main().catch((error) => {
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
