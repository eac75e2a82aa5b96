/**
 * The listener stream's route lives in a Fastify context of its own (the WebSocket plugin wraps only it). Its
 * path parameter must be validated like every other route's (src/http/validation.ts): a context that built
 * Fastify's default validator instead let U+0000 through to the database (a 500 on PostgreSQL).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid } from '../helpers/problems.js';
import { tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await tenantWithToken(t, { scope: 'webhooks:write' }));
});
afterAll(async () => t?.close());

it('U+0000 in the stream path is a 422 naming the id, as on every route, not a 500', async () => {
  const response = await t.http.get('/api/v1/sandbox/webhook-listeners/whl_%00x/stream', { token });
  expect(expectInvalid(response, ['id']).id).toEqual(['must not contain the NUL character (U+0000)']);
});
