/**
 * Regenerates src/generated/api.ts from the service's own client OpenAPI document (built from the route
 * schemas, no server or database) with openapi-typescript. `npm run client:types` (root). The document is
 * built with the default configuration so the output does not depend on the environment;
 * tests/client/types.test.ts fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateClientTypes } from './client-types.js';

const target = fileURLToPath(new URL('../src/generated/api.ts', import.meta.url));
writeFileSync(target, await generateClientTypes());
process.stdout.write(`wrote ${target}\n`);
