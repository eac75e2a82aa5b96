/**
 * The client package's generated types (packages/client/src/generated/api.ts) are committed; they must be
 * what openapi-typescript makes of the document the service serves now. A route schema changed without
 * regenerating fails here: run `npm run client:types`.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { typesFromDocument } from '../../packages/client/scripts/client-types.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  // The default configuration, as `npm run client:types` uses (testConfig changes only logging and the rate limit).
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

it('the committed generated types match the live OpenAPI document', async () => {
  const response = await t.http.get('/api/v1/openapi.json');
  expect(response.status).toBe(200);
  const committed = readFileSync(new URL('../../packages/client/src/generated/api.ts', import.meta.url), 'utf8');
  const current = await typesFromDocument(response.body);
  expect(current === committed, 'packages/client/src/generated/api.ts is stale: run `npm run client:types`').toBe(true);
});
