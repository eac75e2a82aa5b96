/**
 * What Node's HTTP parser refuses before any route runs is still a problem (application/problem+json):
 * headers over 16 KiB are 431 headers-too-large, bytes that are not HTTP are 400 malformed-request, a
 * request that does not arrive within REQUEST_TIMEOUT_MS (its headers or its body) is 408 request-timeout,
 * and the connection is closed. Raw sockets: fetch would refuse to send such requests.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { socketRequest } from '../helpers/raw-http.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { requestTimeoutMs: 1_000 } });
});
afterAll(async () => t?.close());

const raw = (request: string) => socketRequest(t.baseUrl, request);

it('headers over 16 KiB: 431 headers-too-large problem, connection closed', async () => {
  const response = await raw(
    `GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`,
  );
  expect(response.status).toBe(431);
  expect(response.headers).toContain('content-type: application/problem+json');
  expect(response.headers).toContain('connection: close');
  expect(response.body).toMatchObject({ status: 431, type: expect.stringMatching(/\/problems\/headers-too-large$/) });
});

it('bytes that are not HTTP: 400 malformed-request problem', async () => {
  const response = await raw('HELLO THERE\r\n\r\n');
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ status: 400, type: expect.stringMatching(/\/problems\/malformed-request$/) });
});

it('a body that never arrives completely: 408 request-timeout once REQUEST_TIMEOUT_MS has passed', async () => {
  const started = Date.now();
  const response = await raw(
    'POST /api/v1/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"grant_type":',
  );
  expect(response.status).toBe(408);
  expect(response.body).toMatchObject({ status: 408, type: expect.stringMatching(/\/problems\/request-timeout$/) });
  expect(Date.now() - started).toBeLessThan(5_000);
});

// The parser answers before any route is known, so every operation of both documents declares 408 and 431
// (tests/openapi/document.test.ts): a request without a body, and the operator API, get them too.
it('headers that never arrive completely (a GET, no body): 408 request-timeout as well', async () => {
  const response = await raw('GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ');
  expect(response.status).toBe(408);
  expect(response.headers).toContain('content-type: application/problem+json');
  expect(response.body).toMatchObject({ status: 408, type: expect.stringMatching(/\/problems\/request-timeout$/) });
});

it('an operator route: headers over 16 KiB are 431 headers-too-large there too', async () => {
  const response = await raw(
    `DELETE /admin/v1/tenants/t/credentials/c HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
  );
  expect(response.status).toBe(431);
  expect(response.body).toMatchObject({ status: 431, type: expect.stringMatching(/\/problems\/headers-too-large$/) });
});

it('a body with a Content-Encoding: 415 unsupported-media-type (not stored or parsed as if plain)', async () => {
  const body = '{"grant_type":"client_credentials"}';
  const response = await raw(
    `POST /api/v1/oauth/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  expect(response.status).toBe(415);
  expect(response.body).toMatchObject({
    status: 415,
    type: expect.stringMatching(/\/problems\/unsupported-media-type$/),
  });
});
