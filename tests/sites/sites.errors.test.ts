import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE_LIMITS } from '../../src/modules/sites/schemas.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
let siteId: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await tenantWithToken(t));
  siteId = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
});
afterAll(async () => t?.close());

const REQUIRED = ['name', 'siteCode', 'addressLine1', 'city', 'stateRegion', 'postalCode', 'country'] as const;
const OPTIONAL_STRINGS = [
  'addressLine2',
  'uniqueID',
  'uniqueID2',
  'friendlyLocationName',
  'friendlyLocationName2',
] as const;
const STRINGS = [...REQUIRED, ...OPTIONAL_STRINGS];
const READ_ONLY = ['clientId', 'status', 'createdAt', 'updatedAt', 'id'];

const LIMIT: Record<(typeof STRINGS)[number], number> = {
  name: SITE_LIMITS.name,
  siteCode: SITE_LIMITS.siteCode,
  addressLine1: SITE_LIMITS.addressLine,
  addressLine2: SITE_LIMITS.addressLine,
  city: SITE_LIMITS.city,
  stateRegion: SITE_LIMITS.stateRegion,
  postalCode: SITE_LIMITS.postalCode,
  country: SITE_LIMITS.country,
  uniqueID: SITE_LIMITS.uniqueId,
  uniqueID2: SITE_LIMITS.uniqueId,
  friendlyLocationName: SITE_LIMITS.friendlyLocationName,
  friendlyLocationName2: SITE_LIMITS.friendlyLocationName,
};

const create = (json: unknown) => t.http.post('/api/v1/sites', { token, json });
const patch = (json: unknown, headers?: Record<string, string>) =>
  t.http.patch(`/api/v1/sites/${siteId}`, { token, json, ...(headers ? { headers } : {}) });

/** The site list of the test tenant, to prove a refused create stored nothing. */
async function siteCount(): Promise<number> {
  return (await t.http.get('/api/v1/sites', { token, query: { 'page[size]': 100 } })).body.data.length;
}

describe('create: missing and null fields', () => {
  it.each(REQUIRED)('%s missing is 422 naming it', async (field) => {
    const body: Record<string, unknown> = siteBody();
    delete body[field];
    const errors = expectInvalid(await create(body), [field]);
    expect(errors[field]).toEqual(['is required']);
  });

  it('every required field missing at once is named, each one', async () => {
    const errors = expectInvalid(await create({}), [...REQUIRED]);
    for (const field of REQUIRED) expect(errors[field]).toEqual(['is required']);
  });

  it.each(REQUIRED)('%s null is 422', async (field) => {
    const errors = expectInvalid(await create(siteBody({ [field]: null })), [field]);
    expect(errors[field]![0]).toMatch(/not null/);
  });

  it('reports every failing field of one body together', async () => {
    const response = await create({
      name: 5,
      siteCode: '',
      city: null,
      postalCode: 62701,
      color: 'red',
      status: 'Active',
    });
    expectInvalid(response, [
      'name',
      'siteCode',
      'addressLine1',
      'city',
      'stateRegion',
      'postalCode',
      'country',
      'color',
      'status',
    ]);
  });
});

describe('create: wrong types', () => {
  const wrong: [string, unknown][] = [];
  for (const field of STRINGS) wrong.push([field, 42], [field, true], [field, ['x']], [field, { value: 'x' }]);
  wrong.push(['keyRequired', 'true'], ['keyRequired', 1], ['keyRequired', 'yes'], ['keyRequired', []]);
  it.each(wrong)('%s = %j is 422 naming it', async (field, value) => {
    const errors = expectInvalid(await create(siteBody({ [field]: value })), [field]);
    expect(errors[field]![0]).toMatch(/^must be /);
  });

  it('postalCode must be a string, not a number', async () => {
    const errors = expectInvalid(await create(siteBody({ postalCode: 62701 })), ['postalCode']);
    expect(errors.postalCode).toEqual(['must be a string']);
  });
});

describe('create: unknown and read-only fields', () => {
  it('an unknown field is named', async () => {
    const errors = expectInvalid(await create(siteBody({ colour: 'red' })), ['colour']);
    expect(errors.colour).toEqual(['is not a known field']);
  });

  it.each(READ_ONLY)('read-only %s is named as such', async (field) => {
    const errors = expectInvalid(await create(siteBody({ [field]: 'x' })), [field]);
    expect(errors[field]).toEqual(['is read-only and cannot be written']);
  });

  it('all read-only and unknown fields at once, each named', async () => {
    const extra = Object.fromEntries([...READ_ONLY, 'tenantId', 'seq', 'version', 'data'].map((field) => [field, 'x']));
    expectInvalid(await create(siteBody(extra)), [...READ_ONLY, 'tenantId', 'seq', 'version', 'data']);
  });

  it('the envelope shape of responses is not a request body', async () => {
    expectInvalid(await create({ data: { type: 'sites', attributes: siteBody() } }), [...REQUIRED, 'data']);
  });

  it('field names are case-sensitive', async () => {
    const body: Record<string, unknown> = siteBody();
    body.SiteCode = body.siteCode;
    delete body.siteCode;
    expectInvalid(await create(body), ['siteCode', 'SiteCode']);
  });
});

describe('create: string lengths', () => {
  it.each(STRINGS)('%s longer than its maximum is 422', async (field) => {
    const errors = expectInvalid(await create(siteBody({ [field]: 'x'.repeat(LIMIT[field] + 1) })), [field]);
    expect(errors[field]).toEqual([`must be at most ${LIMIT[field]} characters`]);
  });

  it.each(STRINGS)('%s empty is 422', async (field) => {
    const errors = expectInvalid(await create(siteBody({ [field]: '' })), [field]);
    expect(errors[field]).toEqual(['must not be empty']);
  });

  it('counts characters, not bytes', async () => {
    expect((await create(siteBody({ postalCode: '€'.repeat(LIMIT.postalCode) }))).status).toBe(201);
    expectInvalid(await create(siteBody({ postalCode: '€'.repeat(LIMIT.postalCode + 1) })), ['postalCode']);
  });

  it('refuses nothing but stores nothing on failure', async () => {
    const before = await siteCount();
    await create(siteBody({ name: 'x'.repeat(1000) }));
    await create({});
    expect(await siteCount()).toBe(before);
  });
});

describe('create: bodies that are not a JSON object', () => {
  it.each([
    ['an array', [siteBody()]],
    ['a string', 'site'],
    ['a number', 42],
    ['true', true],
    ['null', null],
  ])('%s is 422 on body', async (_label, json) => {
    const response = await t.http.post('/api/v1/sites', {
      token,
      body: JSON.stringify(json),
      headers: { 'content-type': 'application/json' },
    });
    expectInvalid(response, ['body']);
  });

  it.each([
    ['truncated', '{"name":'],
    ['trailing comma', '{"name":"x",}'],
    ['single quotes', "{'name':'x'}"],
    ['two documents', '{}{}'],
    ['empty', ''],
  ])('malformed JSON (%s) is 400 malformed-request', async (_label, body) => {
    const response = await t.http.post('/api/v1/sites', {
      token,
      body,
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(response, 400, 'malformed-request');
  });

  it('prototype pollution members are refused', async () => {
    const response = await t.http.post('/api/v1/sites', {
      token,
      body: `{"__proto__":{"admin":true},${JSON.stringify(siteBody()).slice(1)}`,
      headers: { 'content-type': 'application/json' },
    });
    expect([400, 422]).toContain(response.status);
    expect(response.contentType).toMatch(/^application\/problem\+json/);
  });

  it.each([
    ['text/plain', JSON.stringify(siteBody())],
    ['application/x-www-form-urlencoded', 'name=x&siteCode=y'],
    ['application/xml', '<site/>'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('%s is 415 unsupported-media-type', async (contentType, body) => {
    const response = await t.http.post('/api/v1/sites', { token, body, headers: { 'content-type': contentType } });
    expectProblem(response, 415, 'unsupported-media-type');
    const patched = await t.http.patch(`/api/v1/sites/${siteId}`, {
      token,
      body,
      headers: { 'content-type': contentType },
    });
    expectProblem(patched, 415, 'unsupported-media-type');
  });

  it('a body over 1 MiB is 413', async () => {
    const response = await create(siteBody({ name: 'x'.repeat(1024 * 1024 + 10) }));
    expectProblem(response, 413, 'payload-too-large');
  });
});

describe('create: duplicates', () => {
  it('a second create with the same siteCode is 409 duplicate-resource and stores nothing', async () => {
    const first = siteBody();
    expect((await create(first)).status).toBe(201);
    const before = await siteCount();
    const response = await create(siteBody({ siteCode: first.siteCode }));
    expectProblem(response, 409, 'duplicate-resource');
    expect(response.body.detail).toContain(first.siteCode);
    expect(await siteCount()).toBe(before);
  });

  it('concurrent creates with one siteCode: exactly one wins, the others are 409', async () => {
    const body = siteBody();
    const responses = await Promise.all(Array.from({ length: 10 }, () => create(body)));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
    for (const response of responses.filter((r) => r.status !== 201))
      expectProblem(response, 409, 'duplicate-resource');
  });
});

describe('patch: validation', () => {
  it.each(REQUIRED)('null for required %s is 422', async (field) => {
    expectInvalid(await patch({ [field]: null }), [field]);
  });

  it.each(STRINGS)('%s too long or empty is 422', async (field) => {
    expectInvalid(await patch({ [field]: 'x'.repeat(LIMIT[field] + 1) }), [field]);
    expectInvalid(await patch({ [field]: '' }), [field]);
  });

  it.each([...STRINGS.map((field) => [field, 7] as [string, unknown]), ['keyRequired', 'false'] as [string, unknown]])(
    '%s = %j is 422',
    async (field, value) => {
      expectInvalid(await patch({ [field]: value }), [field]);
    },
  );

  it('unknown and read-only fields are named', async () => {
    const errors = expectInvalid(
      await patch({ name: 'ok', shape: 'round', ...Object.fromEntries(READ_ONLY.map((field) => [field, 'x'])) }),
      ['shape', ...READ_ONLY],
    );
    expect(errors.shape).toEqual(['is not a known field']);
    expect(errors.status).toEqual(['is read-only and cannot be written']);
  });

  it('a body that is not an object, malformed JSON or a missing body', async () => {
    expectInvalid(await patch([{ name: 'x' }]), ['body']);
    expectInvalid(await patch('x'), ['body']);
    expectProblem(
      await t.http.patch(`/api/v1/sites/${siteId}`, {
        token,
        body: '{',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'malformed-request',
    );
    expectInvalid(await t.http.patch(`/api/v1/sites/${siteId}`, { token }), ['body']);
  });

  it('a refused patch changes nothing', async () => {
    const before = await t.http.get(`/api/v1/sites/${siteId}`, { token });
    await patch({ name: 'Changed', bogus: true });
    await patch({ name: 'Changed', city: null });
    const after = await t.http.get(`/api/v1/sites/${siteId}`, { token });
    expect(after.body).toEqual(before.body);
  });
});

describe('patch: conflicts', () => {
  it('a siteCode taken by another site of the tenant is 409 duplicate-resource', async () => {
    const taken = siteBody();
    await create(taken);
    const own = (await create(siteBody())).body.data;
    const response = await t.http.patch(`/api/v1/sites/${own.id}`, { token, json: { siteCode: taken.siteCode } });
    expectProblem(response, 409, 'duplicate-resource');
    const read = await t.http.get(`/api/v1/sites/${own.id}`, { token });
    expect(read.body.data).toEqual(own);
  });

  it.each([
    ['a stale version', '"1"'],
    ['a future version', '"99"'],
    ['a weak tag', 'W/"2"'],
    ['a list without the current version', '"1", "3"'],
  ])('If-Match with %s is 409 version-conflict and changes nothing', async (_label, ifMatch) => {
    const id = (await create(siteBody())).body.data.id;
    await t.http.patch(`/api/v1/sites/${id}`, { token, json: { name: 'v2' } });
    const response = await t.http.patch(`/api/v1/sites/${id}`, {
      token,
      json: { name: 'v3' },
      headers: { 'if-match': ifMatch },
    });
    expectProblem(response, 409, 'version-conflict');
    const read = await t.http.get(`/api/v1/sites/${id}`, { token });
    expect(read.body.data.attributes.name).toBe('v2');
    expect(read.headers.get('etag')).toBe('"2"');
  });

  it('a stale If-Match is a conflict even when the patch would change nothing', async () => {
    const body = siteBody();
    const id = (await create(body)).body.data.id;
    await t.http.patch(`/api/v1/sites/${id}`, { token, json: { name: 'v2' } });
    expectProblem(
      await t.http.patch(`/api/v1/sites/${id}`, { token, json: {}, headers: { 'if-match': '"1"' } }),
      409,
      'version-conflict',
    );
  });

  it.each([
    ['an unquoted version', '2'],
    ['garbage', 'not-an-etag'],
    ['an empty value', ''],
  ])('If-Match with %s is malformed: 422 naming If-Match and asking for the quoted ETag', async (_label, ifMatch) => {
    const response = await patch({ name: 'x' }, { 'if-match': ifMatch });
    expectInvalid(response, ['If-Match']);
    expect(response.body.errors['If-Match'][0]).toContain('with its quotes');
  });

  it('an If-Match longer than 256 characters is 422', async () => {
    expectInvalid(await patch({ name: 'x' }, { 'if-match': `"${'1'.repeat(300)}"` }), ['If-Match']);
  });
});

describe('unknown ids', () => {
  it.each(['site_00000000000000000000000000', 'nope', 'visit_00000000000000000000000000', "site_' OR '1'='1", '%00'])(
    'GET and PATCH %s are 404 not-found',
    async (id) => {
      const path = `/api/v1/sites/${encodeURIComponent(id)}`;
      expectProblem(await t.http.get(path, { token }), 404, 'not-found');
      expectProblem(await t.http.patch(path, { token, json: { name: 'x' } }), 404, 'not-found');
    },
  );

  it('U+0000, which no text column can hold, is a 422 naming the field in a path, a query or a body, not a 500', async () => {
    const site = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data;
    const [bad, good] = await Promise.all([
      t.http.get('/api/v1/sites/site_%00x', { token }),
      t.http.get(`/api/v1/sites/${site.id}`, { token }),
    ]);
    expect(expectInvalid(bad, ['id']).id).toEqual(['must not contain the NUL character (U+0000)']);
    expect(good.status).toBe(200);
    expectInvalid(await t.http.patch('/api/v1/sites/site_%00x', { token, json: { name: 'x' } }), ['id']);
    expectInvalid(await t.http.get('/api/v1/sites', { token, query: { siteCode: 'A\u0000B' } }), ['siteCode']);
    expectInvalid(await t.http.post('/api/v1/sites', { token, json: siteBody({ name: 'Store\u0000' }) }), ['name']);
    expectInvalid(await t.http.patch(`/api/v1/sites/${site.id}`, { token, json: { addressLine2: '\u0000' } }), [
      'addressLine2',
    ]);
  });

  it('404 wins over If-Match on an unknown id', async () => {
    expectProblem(
      await t.http.patch('/api/v1/sites/site_unknown', { token, json: { name: 'x' }, headers: { 'if-match': '"1"' } }),
      404,
      'not-found',
    );
  });

  it('an id longer than any id is 404 or 422, never a bare framework error', async () => {
    for (const length of [101, 201, 5000]) {
      const response = await t.http.get(`/api/v1/sites/site_${'x'.repeat(length)}`, { token });
      expect([404, 422]).toContain(response.status);
      expect(response.contentType).toMatch(/^application\/problem\+json/);
    }
  });

  it('a malformed percent-encoding in the path is a problem, not a bare framework error', async () => {
    const response = await t.http.get('/api/v1/sites/%E0%A4%A', { token });
    expect([400, 404]).toContain(response.status);
    expect(response.contentType).toMatch(/^application\/problem\+json/);
  });
});
