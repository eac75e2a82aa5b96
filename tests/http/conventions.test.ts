import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

const PROBLEMS = 'https://docs.example.com/problems';
let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp({ config: { problemBaseUrl: PROBLEMS } });
  ({ token } = await tenantWithToken(t));
});
afterAll(async () => t?.close());

/** A raw request, for what fetch will not send (no Content-Type with a body, odd methods). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${t.baseUrl}${path}`, { method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

describe('problem details', () => {
  it('every error is application/problem+json with type {PROBLEM_BASE_URL}/<slug>, title, status and detail', async () => {
    const response = await t.http.get('/api/v1/sites/site_missing', { token });
    expectProblem(response, 404, 'not-found');
    expect(response.body).toEqual({
      type: `${PROBLEMS}/not-found`,
      title: 'Not found',
      status: 404,
      detail: expect.any(String),
    });
  });

  it('a validation problem names every failing field in errors', async () => {
    const response = await t.http.post('/api/v1/sites', { token, json: { name: '' } });
    expectProblem(response, 422, 'validation-error');
    expect(response.body.type).toBe(`${PROBLEMS}/validation-error`);
    expect(Object.keys(response.body.errors).sort()).toEqual([
      'addressLine1',
      'city',
      'country',
      'name',
      'postalCode',
      'siteCode',
      'stateRegion',
    ]);
  });
});

describe('unknown routes and methods', () => {
  it.each([
    '/nope',
    '/api/v1/nope',
    '/api/v1',
    '/api/v1/',
    '/api/v2/sites',
    '/API/V1/SITES',
    '/api/v1//sites',
    '/health/',
    '/api/v1/sites/x/y',
  ])('GET %s is 404 not-found', async (path) => {
    expectProblem(await t.http.get(path, { token }), 404, 'not-found');
  });

  it('an unknown route under /api/v1 is 404 with or without a token (routing comes first)', async () => {
    expectProblem(await t.http.get('/api/v1/widgets'), 404, 'not-found');
    expectProblem(await t.http.post('/api/v1/widgets', { json: {} }), 404, 'not-found');
  });

  it.each([
    ['DELETE', '/api/v1/sites', 'GET, HEAD, POST'],
    ['PUT', '/api/v1/sites', 'GET, HEAD, POST'],
    ['PUT', '/api/v1/sites/site_x', 'GET, HEAD, PATCH'],
    ['DELETE', '/api/v1/sites/site_x', 'GET, HEAD, PATCH'],
    ['POST', '/api/v1/sites/site_x', 'GET, HEAD, PATCH'],
    ['GET', '/api/v1/oauth/token', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
    ['DELETE', '/ready', 'GET, HEAD'],
    ['OPTIONS', '/api/v1/sites', 'GET, HEAD, POST'],
    // As the router reads them: percent-encoding decoded, an empty last parameter a parameter.
    ['DELETE', '/api/v1/%73ites', 'GET, HEAD, POST'],
    ['DELETE', '/api/v1/sites/', 'GET, HEAD, PATCH'],
  ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
    const response = await t.http.request(method, path, { token });
    expectProblem(response, 405, 'method-not-allowed');
    expect(response.headers.get('allow')).toBe(allow);
  });
});

describe('an address outside the APIs', () => {
  it.each(['/', '/api/v2/sites', '/sites'])('%s is 404 saying where the API and its reference are', async (path) => {
    const response = await t.http.get(path, { token });
    expectProblem(response, 404, 'not-found');
    expect(response.body.detail).toBe(
      `No resource lives at ${path}. The API is under /api/v1/; its reference is at /docs.`,
    );
  });
});

describe("a problem's size does not grow with the request", () => {
  it('an unknown path longer than a name repeated is described by its length (src/http/request-names.ts)', async () => {
    const response = await t.http.get(`/api/v1/${'q'.repeat(15_000)}`, { token });
    expectProblem(response, 404, 'not-found');
    expect(response.body.detail).toBe('No resource lives at a path of 15008 characters, more than the 100 repeated.');
    expect(JSON.stringify(response.body).length).toBeLessThan(1_000);
  });

  it("the token endpoint's long unknown scope is described by its length, in detail and error_description alike", async () => {
    const response = await t.http.post('/api/v1/oauth/token', {
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'c',
        client_secret: 's',
        scope: 'x'.repeat(16_000),
      }),
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      error: 'invalid_scope',
      detail: 'Unknown scope: a scope of 16000 characters, more than the 100 repeated.',
    });
    expect(response.body.error_description).toBe(response.body.detail);
    expect(JSON.stringify(response.body).length).toBeLessThan(1_000);
  });
});

describe('request ids', () => {
  it('every response carries x-request-id, errors included', async () => {
    const responses = [
      await t.http.get('/health'),
      await t.http.get('/api/v1/sites', { token }),
      await t.http.get('/api/v1/sites'),
      await t.http.get('/api/v1/nope'),
      await t.http.post('/api/v1/sites', { token, json: {} }),
      await t.http.get(`/api/v1/sites/${'x'.repeat(300)}`, { token }),
      await t.http.get('/api/v1/sites/%E0%A4%A', { token }),
    ];
    for (const response of responses) expect(response.headers.get('x-request-id')).toMatch(/^[\w.:-]{1,128}$/);
    expect(new Set(responses.map((response) => response.headers.get('x-request-id'))).size).toBe(responses.length);
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    expect(
      (await t.http.get('/health', { headers: { 'x-request-id': 'trace-42.a:b_c' } })).headers.get('x-request-id'),
    ).toBe('trace-42.a:b_c');
    expect(
      (await t.http.get('/api/v1/nope', { headers: { 'x-request-id': 'trace-43' } })).headers.get('x-request-id'),
    ).toBe('trace-43');
    for (const unsafe of ['has space', '<script>', 'x'.repeat(129), 'new\u00e9']) {
      const echoed = (
        await t.http.get('/health', { headers: { 'x-request-id': Buffer.from(unsafe).toString('latin1') } })
      ).headers.get('x-request-id');
      expect(echoed).not.toBe(unsafe);
      expect(echoed).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('operations endpoints', () => {
  it('GET /health and GET /ready answer without a token', async () => {
    const health = await t.http.get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await t.http.get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
    expect((await t.http.request('HEAD', '/health')).status).toBe(200);
  });

  it('ignore an Authorization header, valid or not', async () => {
    expect((await t.http.get('/health', { token: 'garbage' })).status).toBe(200);
    expect((await t.http.get('/ready', { token })).status).toBe(200);
  });
});

describe('media types', () => {
  it('a body without a Content-Type is 415 on JSON endpoints', async () => {
    const response = await raw(
      'POST',
      '/api/v1/sites',
      { authorization: `Bearer ${token}` },
      JSON.stringify(siteBody()),
    );
    expect(response.status).toBe(415);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('successful responses are application/json', async () => {
    const created = await t.http.post('/api/v1/sites', { token, json: siteBody() });
    expect(created.contentType).toMatch(/^application\/json/);
  });
});
