/**
 * A JSON body's bytes must be UTF-8 (RFC 8259 §8.1): bytes that are not are 400 `malformed-request`, refused
 * before decoding, where they were decoded with U+FFFD and stored (two siteCodes differing only in a byte
 * that is not UTF-8 collided as one). What is UTF-8 is read as before: a byte order mark, a charset
 * parameter, text outside the BMP; and a body over its route's limit is still 413 unread. Runs on PGlite
 * and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_UTF8_DETAIL } from '../../src/http/json-body.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectOAuthError, expectProblem } from '../helpers/problems.js';
import { siteBody, type TestTenant, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let tenant: TestTenant & { token: string };
/** A tenant only ever sent refused bodies: it must have no site at all. */
let refused: TestTenant & { token: string };
beforeAll(async () => {
  t = await startTestApp();
  tenant = await tenantWithToken(t);
  refused = await tenantWithToken(t);
});
afterAll(async () => t?.close());

/** The JSON text of `body` as UTF-8, with `marker` (an ASCII placeholder in one of its strings) replaced by `bytes`. */
function withBytes(body: object, marker: string, bytes: number[]): Buffer {
  const text = Buffer.from(JSON.stringify(body));
  const at = text.indexOf(marker);
  expect(at).toBeGreaterThanOrEqual(0);
  return Buffer.concat([text.subarray(0, at), Buffer.from(bytes), text.subarray(at + marker.length)]);
}

function send(method: string, path: string, body: Buffer, headers: Record<string, string> = {}, token = refused.token) {
  return t.http.request(method, path, { token, body, headers: { 'content-type': 'application/json', ...headers } });
}

function expectNotUtf8(response: TestResponse): void {
  expectProblem(response, 400, 'malformed-request');
  expect(response.body.detail).toBe(NOT_UTF8_DETAIL);
}

async function expectNoSite(): Promise<void> {
  const listed = await t.http.get('/api/v1/sites', { token: refused.token });
  expect(listed.status).toBe(200);
  expect(listed.body.data).toEqual([]);
}

/** Byte sequences that are not UTF-8: stray bytes, a truncated sequence, an overlong form, a surrogate, beyond U+10FFFF. */
const NOT_UTF8: [string, number[]][] = [
  ['0xff', [0xff]],
  ['0xfe', [0xfe]],
  ['a lone continuation byte', [0x80]],
  ['a truncated sequence', [0xc3]],
  ['an overlong slash', [0xc0, 0xaf]],
  ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ['a code point beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ['a Latin-1 é', [0xe9]],
];

describe('a JSON body that is not UTF-8', () => {
  it.each(NOT_UTF8)('%s in a string is 400 malformed-request, nothing stored', async (_label, bytes) => {
    const body = siteBody({ siteCode: 'U8-MARK' });
    expectNotUtf8(await send('POST', '/api/v1/sites', withBytes(body, 'MARK', bytes)));
    await expectNoSite();
  });

  it('the probe: U8-1-\\xff and U8-1-\\xfe are both refused, neither stored as U8-1-\\ufffd (no 201, no 409)', async () => {
    for (const byte of [0xff, 0xfe]) {
      expectNotUtf8(await send('POST', '/api/v1/sites', withBytes(siteBody({ siteCode: 'U8-1-X' }), 'X', [byte])));
    }
    await expectNoSite();
  });

  it('in a member name, at the start or at the end of the body', async () => {
    const name = withBytes({ ...siteBody(), MARK: 1 }, 'MARK', [0xff]);
    expectNotUtf8(await send('POST', '/api/v1/sites', name));
    const json = Buffer.from(JSON.stringify(siteBody()));
    expectNotUtf8(await send('POST', '/api/v1/sites', Buffer.concat([Buffer.from([0xff]), json])));
    expectNotUtf8(await send('POST', '/api/v1/sites', Buffer.concat([json, Buffer.from([0xe2, 0x82])])));
    // A byte order mark of another encoding (UTF-16) is not UTF-8 either.
    expectNotUtf8(await send('POST', '/api/v1/sites', Buffer.concat([Buffer.from([0xff, 0xfe]), json])));
    await expectNoSite();
  });

  it('the detail is the same whatever the body: it neither echoes the body nor grows with it', async () => {
    const small = await send('POST', '/api/v1/sites', withBytes(siteBody({ name: 'MARK' }), 'MARK', [0xff]));
    const large = withBytes(siteBody({ name: `MARK${'\u00e9'.repeat(90)}` }), 'MARK', Array(200).fill(0xfe));
    const response = await send('POST', '/api/v1/sites', large);
    expectNotUtf8(response);
    expect(response.text).toBe(small.text);
    expect(response.text).not.toContain('\ufffd');
  });

  it('on every JSON route: PATCH, the operator API, and the token endpoint (400 invalid_request)', async () => {
    const site = await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody() });
    expect(site.status, site.text).toBe(201);
    const patch = withBytes({ city: 'MARK' }, 'MARK', [0xff]);
    const headers = { 'if-match': '"1"' };
    expectNotUtf8(await send('PATCH', `/api/v1/sites/${site.body.data.id}`, patch, headers, tenant.token));
    const read = await t.http.get(`/api/v1/sites/${site.body.data.id}`, { token: tenant.token });
    expect(read.body.data.meta.version).toBe(1);

    expectNotUtf8(
      await send('POST', '/admin/v1/tenants', withBytes({ name: 'MARK' }, 'MARK', [0xff]), {}, t.adminToken),
    );

    const grant = { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: 'MARK' };
    const token = await t.http.post('/api/v1/oauth/token', {
      body: withBytes(grant, 'MARK', [0xff]),
      headers: { 'content-type': 'application/json' },
    });
    expectOAuthError(token, 400, 'invalid_request', 'malformed-request');
    expect(token.body.error_description).toBe(NOT_UTF8_DETAIL);
  });

  it('over the route limit it is 413 as any body, unread', async () => {
    const document = (await t.http.get('/api/v1/openapi.json')).body;
    const tooLarge = document.paths['/api/v1/sites'].post.responses['413'].description as string;
    const limit = Number(/at most (\d+) bytes/.exec(tooLarge)?.[1]);
    expect(limit).toBeGreaterThan(0);
    const over = withBytes(siteBody({ name: `MARK${' '.repeat(limit)}` }), 'MARK', [0xff]);
    const response = await send('POST', '/api/v1/sites', over);
    expectProblem(response, 413, 'payload-too-large');
    expect(response.body.detail).toBe(
      `The request body is larger than this endpoint accepts (at most ${limit} bytes).`,
    );
  });
});

describe('a JSON body that is UTF-8 is read as before', () => {
  it('text of two, three and four bytes a character is stored and answered as sent, with or without a charset', async () => {
    for (const contentType of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
    ]) {
      const body = siteBody({ name: 'Café ∑ 😀 \ufffd' });
      const headers = { 'content-type': contentType };
      const created = await send('POST', '/api/v1/sites', Buffer.from(JSON.stringify(body)), headers, tenant.token);
      expect(created.status, created.text).toBe(201);
      expect(created.body.data.attributes.name).toBe('Café ∑ 😀 \ufffd');
    }
  });

  it('a leading UTF-8 byte order mark is skipped', async () => {
    const body = siteBody();
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const text = Buffer.from(JSON.stringify(body));
    const created = await send('POST', '/api/v1/sites', Buffer.concat([bom, text]), {}, tenant.token);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.attributes.siteCode).toBe(body.siteCode);
    // A mark alone is no JSON; an empty body neither.
    expectProblem(await send('POST', '/api/v1/sites', bom), 400, 'malformed-request');
    const empty = await send('POST', '/api/v1/sites', Buffer.alloc(0));
    expectProblem(empty, 400, 'malformed-request');
    expect(empty.body.detail).toBe('The body is empty although Content-Type is application/json.');
  });

  it('an empty body with Content-Type: application/json is no body where the route takes none (a DELETE)', async () => {
    const other = await tenantWithToken(t);
    const path = `/admin/v1/tenants/${other.tenantId}/credentials/${other.clientId}`;
    const revoked = await t.http.request('DELETE', path, {
      body: Buffer.alloc(0),
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
    });
    expect(revoked.status, revoked.text).toBe(204);
    // A route that takes a body still refuses an empty one (above), and a DELETE's body that is not JSON too.
    const garbled = await t.http.request('DELETE', path, {
      body: Buffer.from('{'),
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
    });
    expectProblem(garbled, 400, 'malformed-request');
  });

  it('malformed JSON that is UTF-8 is still "not well-formed JSON"', async () => {
    const response = await send('POST', '/api/v1/sites', Buffer.from('{"name": "é",'));
    expectProblem(response, 400, 'malformed-request');
    expect(response.body.detail).toBe('The request body is not well-formed JSON.');
  });
});
