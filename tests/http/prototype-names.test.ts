/**
 * Unknown query parameters and body members named like Object.prototype's properties (valueOf, __proto__,
 * constructor, ...) are 422s naming them, like any unknown name. Found by the fuzzing reliability suite:
 * they were 500s, the field-error map handing back Object.prototype's members.
 *
 * A member that could change a prototype (`__proto__`, or `constructor` holding `prototype`) is refused at any
 * depth, even where the schema admits any member, and never stored: a 422 naming it (it was a 400 "not
 * well-formed JSON", which it is not), and on the token endpoint OAuth's 400 invalid_request naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSTRUCTOR_MESSAGE, PROTO_MESSAGE } from '../../src/http/json-body.js';
import { MAX_FIELD_ERRORS } from '../../src/http/problem.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid, expectOAuthError } from '../helpers/problems.js';
import { siteBody, type TestTenant, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
let tenant: TestTenant;
beforeAll(async () => {
  t = await startTestApp();
  ({ token, ...tenant } = await tenantWithToken(t));
});
afterAll(async () => t?.close());

const NAMES = ['valueOf', 'toString', 'constructor', '__proto__', 'hasOwnProperty', '__defineGetter__'];

it.each(NAMES)('a query parameter named %s is a 422 naming it', async (name) => {
  const response = await t.http.get(`/api/v1/sites?${name}=0`, { token });
  expect(expectInvalid(response, [name])[name]).toEqual(['is not a known field']);
});

/** `text` (JSON) as the body of a request, sent as written: JSON.stringify cannot write a `__proto__` member. */
function send(method: string, path: string, text: string, bearer = token) {
  return t.http.request(method, path, { token: bearer, body: text, headers: { 'content-type': 'application/json' } });
}

/** A valid site body with `members` (JSON text) added at its end. */
const siteWith = (members: string) => `${JSON.stringify(siteBody()).slice(0, -1)},${members}}`;

it.each(NAMES)('a body member named %s is a 422 naming it', async (name) => {
  const response = await send('POST', '/api/v1/sites', siteWith(`${JSON.stringify(name)}:1`));
  expect(expectInvalid(response, [name])[name]).toEqual([
    name === '__proto__' ? PROTO_MESSAGE : 'is not a known field',
  ]);
});

describe('members that could change a prototype', () => {
  it.each([
    ['__proto__ holding an object', '"__proto__":{"admin":true}', '__proto__', PROTO_MESSAGE],
    ['__proto__ spelt with escapes', '"\\u005f_pro\\u0074o__":{}', '__proto__', PROTO_MESSAGE],
    ['constructor holding prototype', '"constructor":{"prototype":{"admin":true}}', 'constructor', CONSTRUCTOR_MESSAGE],
  ])('%s is a 422 naming it, and nothing is stored', async (_label, member, field, message) => {
    const body = siteWith(member);
    const response = await send('POST', '/api/v1/sites', body);
    expect(expectInvalid(response, [field])[field]).toEqual([message]);
    const siteCode = (JSON.parse(body.replace(member, '"x":1')) as { siteCode: string }).siteCode;
    expect((await t.http.get('/api/v1/sites', { token, query: { siteCode } })).body.data).toEqual([]);
  });

  it("at any depth, named by its path, beside none of the schema's complaints", async () => {
    const body = '{"a":[{"b":{"__proto__":null}}],"c":{"constructor":{"prototype":1}},"constructor":{"x":1}}';
    const response = await send('POST', '/api/v1/sites', body);
    const errors = expectInvalid(response, ['a[0].b.__proto__', 'c.constructor']);
    expect(errors['a[0].b.__proto__']).toEqual([PROTO_MESSAGE]);
    expect(errors['c.constructor']).toEqual([CONSTRUCTOR_MESSAGE]);
  });

  it('in text, or as a constructor without prototype, it is only text', async () => {
    const response = await send('POST', '/api/v1/sites', siteWith('"description":"\\"__proto__\\": {}"'));
    expect(expectInvalid(response, ['description']).description).toEqual(['is not a known field']);
    const site = await t.http.post('/api/v1/sites', { token, json: siteBody({ name: '"__proto__": "constructor":' }) });
    expect(site.status, site.text).toBe(201);
  });

  it('on PATCH and on the operator API too', async () => {
    const site = await t.http.post('/api/v1/sites', { token, json: siteBody() });
    const patch = await t.http.patch(`/api/v1/sites/${site.body.data.id}`, {
      token,
      headers: { 'if-match': '"1"', 'content-type': 'application/json' },
      body: '{"city":"Elsewhere","__proto__":{"city":"x"}}',
    });
    expectInvalid(patch, ['__proto__']);
    expect((await t.http.get(`/api/v1/sites/${site.body.data.id}`, { token })).body.data.meta.version).toBe(1);
    const tenantCreate = await send('POST', '/admin/v1/tenants', '{"name":"Proto","__proto__":{}}', t.adminToken);
    expectInvalid(tenantCreate, ['__proto__']);
  });

  it('many of them: the first 50 found, long names described and counted, the problem bounded', async () => {
    const members = Array.from({ length: 120 }, (_, index) => `"m${index}${'x'.repeat(200)}":{"__proto__":1}`);
    const response = await send('POST', '/api/v1/sites', `{${members.join(',')}}`);
    // Each member's name is over 100 characters: not repeated (src/http/request-names.ts), the first described.
    const errors = expectInvalid(response, ['body']);
    expect(errors.body).toEqual([
      `has a member with a name of 202 characters, more than the 100 repeated, not repeated here; a field within it: ${PROTO_MESSAGE}`,
      `has ${MAX_FIELD_ERRORS - 1} more members whose names are not repeated here either`,
    ]);
    expect(response.body.errorsOmitted).toBe(120 - 1);
    expect(Buffer.byteLength(response.text)).toBeLessThan(2 * 1024);
  });

  it('the token endpoint answers 400 invalid_request naming it, as its other malformed parameters', async () => {
    const grant = { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret };
    const body = `${JSON.stringify(grant).slice(0, -1)},"__proto__":{"scope":"sites:read"}}`;
    const response = await t.http.post('/api/v1/oauth/token', {
      body,
      headers: { 'content-type': 'application/json' },
    });
    expectOAuthError(response, 400, 'invalid_request', 'malformed-request');
    expect(response.body.error_description).toContain('__proto__');
    expect(response.body.detail).not.toContain('well-formed');
    // Without it the same grant is a token.
    const granted = await t.http.post('/api/v1/oauth/token', { json: grant });
    expect(granted.status, granted.text).toBe(200);
  });
});
