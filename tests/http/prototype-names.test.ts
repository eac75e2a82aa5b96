/**
 * Unknown query parameters and body members named like Object.prototype's properties (valueOf, __proto__,
 * constructor, ...) are 422s naming them, like any unknown name. Found by the fuzzing reliability suite:
 * they were 500s, the field-error map handing back Object.prototype's members.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp();
  token = (await tenantWithToken(t)).token;
});
afterAll(async () => t?.close());

const NAMES = ['valueOf', 'toString', 'constructor', '__proto__', 'hasOwnProperty', '__defineGetter__'];

it.each(NAMES)('a query parameter named %s is a 422 naming it', async (name) => {
  const response = await t.http.get(`/api/v1/sites?${name}=0`, { token });
  expect(expectInvalid(response, [name])[name]).toEqual(['is not a known field']);
});

it.each(NAMES)('a body member named %s is a 422 naming it', async (name) => {
  const body = `${JSON.stringify(siteBody()).slice(0, -1)},${JSON.stringify(name)}:1}`;
  const response = await t.http.post('/api/v1/sites', { token, body, headers: { 'content-type': 'application/json' } });
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.status).toBeLessThan(500);
});
