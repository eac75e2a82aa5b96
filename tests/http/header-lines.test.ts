/**
 * Header lines that give a request two meanings (hostile-tenant probe). Node keeps the first of two Host,
 * Authorization or Content-Type lines and drops the other, and hands a body over with the chunked coding
 * removed whatever other transfer coding it names; a proxy or filter in front that reads the other line, or
 * frames the body otherwise, sees another request than the service. Such a request is refused (400
 * malformed-request naming the header, connection closed); what is sent once, or list fields sent twice,
 * are read as before. Raw sockets: fetch merges or refuses these lines itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type SocketAnswer, socketRequest } from '../helpers/raw-http.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await tenantWithToken(t));
});
afterAll(async () => t?.close());

const raw = (head: string[], body = '') => socketRequest(t.baseUrl, `${head.join('\r\n')}\r\n\r\n${body}`);

const create = (lines: string[]) => [
  'POST /api/v1/sites HTTP/1.1',
  'Host: service.test',
  `Authorization: Bearer ${token}`,
  ...lines,
];

function expectRefused(response: SocketAnswer, header: string) {
  expect(response.status).toBe(400);
  expect(response.headers).toContain('content-type: application/problem+json');
  expect(response.headers).toContain('connection: close');
  expect(response.body).toMatchObject({ status: 400, type: expect.stringMatching(/\/problems\/malformed-request$/) });
  expect(response.body.detail).toContain(header);
}

describe('a header that may be sent once, sent twice', () => {
  it('two Host lines: 400 (RFC 9112 §3.2), whichever comes first', async () => {
    expectRefused(await raw(['GET /health HTTP/1.1', 'Host: service.test', 'Host: other.test']), 'Host');
  });

  it('two Authorization lines: 400, though the first holds a valid token (never 200 by the first, 401 by the last)', async () => {
    const path = 'GET /api/v1/sites HTTP/1.1';
    const valid = `Authorization: Bearer ${token}`;
    const other = 'Authorization: Bearer not-a-token';
    expectRefused(await raw([path, 'Host: service.test', valid, other]), 'Authorization');
    expectRefused(await raw([path, 'Host: service.test', other, valid]), 'Authorization');
  });

  it('two Content-Type lines: 400, the JSON body not read as the first one says', async () => {
    const body = JSON.stringify(siteBody());
    const response = await raw(
      create(['Content-Type: application/json', 'Content-Type: text/plain', `Content-Length: ${body.length}`]),
      body,
    );
    expectRefused(response, 'Content-Type');
  });

  it('two Idempotency-Key lines: 400 naming the header (not a key "a, b")', async () => {
    const body = JSON.stringify(siteBody());
    const lines = ['Content-Type: application/json', 'Idempotency-Key: a', 'Idempotency-Key: b'];
    expectRefused(await raw(create([...lines, `Content-Length: ${body.length}`]), body), 'Idempotency-Key');
  });

  it('sent once each, and a list field (Accept, Cache-Control) sent twice: read as before', async () => {
    const response = await raw([
      'GET /api/v1/sites HTTP/1.1',
      'Host: service.test',
      `Authorization: Bearer ${token}`,
      'Accept: application/json',
      'Accept: */*',
      'Cache-Control: no-cache',
      'Cache-Control: max-age=0',
    ]);
    expect(response.status).toBe(200);
    expect(response.headers).not.toContain('connection: close');
  });
});

describe('a transfer coding other than chunked', () => {
  const chunked = (json: string) => `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`;

  for (const codings of [['gzip, chunked'], ['gzip', 'chunked'], ['identity, chunked'], ['deflate,chunked']]) {
    it(`Transfer-Encoding ${codings.join(' + ')}: 400, the body not read as if it had no other coding`, async () => {
      const body = JSON.stringify(siteBody());
      const lines = ['Content-Type: application/json', ...codings.map((coding) => `Transfer-Encoding: ${coding}`)];
      expectRefused(await raw(create(lines), chunked(body)), 'Transfer-Encoding');
    });
  }

  it('a coding with an invisible character, or a long one, is described rather than repeated', async () => {
    const body = JSON.stringify(siteBody());
    // Written as UTF-8 (E2 80 AE), read by Node as Latin-1: the second of those bytes is the C1 control U+0080.
    const bidi = ['Content-Type: application/json', 'Transfer-Encoding: gzip\u202e, chunked'];
    const hostile = await raw(create(bidi), chunked(body));
    expectRefused(hostile, 'Transfer-Encoding');
    expect(hostile.body.detail).toMatch(
      /^Transfer-Encoding with a coding holding a control or invisible character \(U\+0080 at character 6\) is not supported/,
    );
    const long = ['Content-Type: application/json', `Transfer-Encoding: ${'x'.repeat(200)}, chunked`];
    const answer = await raw(create(long), chunked(body));
    expect(answer.body.detail).toMatch(
      /^Transfer-Encoding with a coding of 209 characters, more than the 100 repeated/,
    );
  });

  it('Transfer-Encoding: chunked alone (any case) is read as before: 201', async () => {
    const body = JSON.stringify(siteBody());
    const response = await raw(create(['Content-Type: application/json', 'Transfer-Encoding: Chunked']), chunked(body));
    expect(response.status).toBe(201);
  });
});
