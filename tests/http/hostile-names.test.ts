/**
 * Names the request chose, as its problems refer to them (the rule of src/http/request-names.ts): an
 * unknown body member or query parameter whose name holds a bidi override, a NUL or 10,000 characters is a
 * 422 that does not repeat it, escaped or not, but files the error under `body` or `querystring` naming the
 * character and its position, or the length; the problem's size does not grow with the name. Ids and paths
 * that a 404 repeats follow the same rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await tenantWithToken(t));
});
afterAll(async () => t?.close());

/** Far above these problems (about 300 bytes), far below what repeating a 10,000-character name would make. */
const PROBLEM_BYTES = 1_000;

const HOSTILE: [label: string, name: string, described: string][] = [
  [
    'a right-to-left override',
    'invoice\u202efdp.exe',
    'holding a control or invisible character (U+202E at character 8)',
  ],
  ['a NUL', 'a\u0000b', 'holding a control or invisible character (U+0000 at character 2)'],
  ['10,000 characters', 'k'.repeat(10_000), 'of 10000 characters, more than the 100 repeated'],
];

/** Neither the name nor any escape of its characters is in the answer. */
function expectNotRepeated(response: TestResponse) {
  expect(Buffer.byteLength(response.text)).toBeLessThan(PROBLEM_BYTES);
  expect(response.text).not.toMatch(/\u202e|\u0000|\\u202e|\\u0000|fdp|kkkkkkkkkk/i);
}

describe('an unknown body member', () => {
  it.each(HOSTILE)('named with %s: filed under body, described, not repeated', async (_label, name, described) => {
    const response = await t.http.post('/api/v1/sites', {
      token,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...siteBody(), [name]: 1 }),
    });
    const errors = expectInvalid(response, ['body']);
    expect(errors.body![0]).toBe(`has a member with a name ${described}, not repeated here: is not a known field`);
    expect(response.body.detail).toBe('The request has an invalid field: body.');
    expectNotRepeated(response);
  });

  it('beside a printable unknown member, which is repeated as before', async () => {
    const response = await t.http.post('/api/v1/sites', {
      token,
      json: { ...siteBody(), 'a\u202eb': 1, 'plain/name~': 2 },
    });
    const errors = expectInvalid(response, ['body', 'plain/name~']);
    expect(errors['plain/name~']).toEqual(['is not a known field']);
  });
});

describe('an unknown query parameter', () => {
  it.each(HOSTILE)('named with %s: filed under querystring, described', async (_label, name, described) => {
    const response = await t.http.get('/api/v1/sites', { token, query: { [name]: '1' } });
    const errors = expectInvalid(response, ['querystring']);
    expect(errors.querystring![0]).toBe(
      `has a parameter with a name ${described}, not repeated here: is not a known field`,
    );
    expectNotRepeated(response);
  });

  it('a printable one is repeated as before', async () => {
    const response = await t.http.get('/api/v1/sites', { token, query: { ['x'.repeat(100)]: '1' } });
    expect(expectInvalid(response, ['x'.repeat(100)])['x'.repeat(100)]).toEqual(['is not a known field']);
  });

  it('fifty of them: one described, the others counted, the problem still small', async () => {
    const query = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`q\u200b${index}`, '1']));
    const response = await t.http.get('/api/v1/sites', { token, query });
    const errors = expectInvalid(response, ['querystring']);
    expect(errors.querystring).toEqual([
      'has a parameter with a name holding a control or invisible character (U+200B at character 2), not repeated here: is not a known field',
      'has 49 more parameters whose names are not repeated here either',
    ]);
    expect(response.body.errorsOmitted).toBe(49);
    expect(Buffer.byteLength(response.text)).toBeLessThan(PROBLEM_BYTES);
  });
});

describe('ids and paths a 404 repeats', () => {
  it('an id with a bidi override is described, a printable one repeated', async () => {
    const hostile = await t.http.get(`/api/v1/sites/${encodeURIComponent('S\u202e1')}`, { token });
    expectProblem(hostile, 404, 'not-found');
    expect(hostile.body.detail).toMatch(
      /^Site with an id holding a control or invisible character \(U\+202E at character 2\) was not found: site ids begin with site_\. .*siteCode=…$/,
    );
    expect(hostile.text).not.toMatch(/\u202e|\\u202e/i);
    const plain = await t.http.get('/api/v1/sites/S-1', { token });
    expect(plain.body.detail).toMatch(/^Site "S-1" was not found: .*siteCode=S-1$/);
  });

  it('a path of 15,000 characters is described by its length', async () => {
    const response = await t.http.get(`/api/v1/${'q'.repeat(15_000)}`, { token });
    expectProblem(response, 404, 'not-found');
    expect(response.body.detail).toBe('No resource lives at a path of 15008 characters, more than the 100 repeated.');
  });
});

describe("the token endpoint's unknown scopes", () => {
  it('each by the rule, the first five, the others counted', async () => {
    const scope = ['a\u202eb', 's'.repeat(101), 'x', 'y', 'z', 'v', 'w'].join(' ');
    const response = await t.http.post('/api/v1/oauth/token', {
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'c', client_secret: 's', scope }),
    });
    expect(response.status).toBe(400);
    expect(response.body.detail).toBe(
      'Unknown scope: a scope holding a control or invisible character (U+202E at character 2), a scope of 101 characters, more than the 100 repeated, x, y, z and 2 more.',
    );
    expect(response.text).not.toMatch(/\u202e|\\u202e|sssss/i);
  });
});
