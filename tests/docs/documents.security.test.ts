import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { rateLimitPerMinute: 3 } });
});
afterAll(async () => t?.close());

describe('access to the documents and pages', () => {
  it('the operator document needs the operator token', async () => {
    const missing = await t.http.get('/admin/v1/openapi.json');
    expect(missing.status).toBe(401);
    expect(missing.contentType).toMatch(/^application\/problem\+json/);
    expect((await t.http.get('/admin/v1/openapi.json', { token: 'adm_wrong-token-of-some-length' })).status).toBe(401);
    const allowed = await t.http.get('/admin/v1/openapi.json', { token: t.adminToken });
    expect(allowed.status).toBe(200);
    expect(allowed.body.openapi).toBe('3.1.0');
  });

  it('the client document needs no token but is counted by the rate limit; /docs and /problems are not', async () => {
    for (let i = 0; i < 3; i++) expect((await t.http.get('/api/v1/openapi.json')).status).toBe(200);
    const refused = await t.http.get('/api/v1/openapi.json');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      expect((await t.http.get('/docs')).status).toBe(200);
      expect((await t.http.get('/problems/')).status).toBe(200);
    }
  });

  it('the reference page may load only what the service serves', async () => {
    const page = await t.http.get('/docs');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.text).not.toMatch(/https?:\/\//);
    const bundle = await t.http.get('/docs/redoc.standalone.js');
    expect(bundle.status).toBe(200);
    expect(bundle.contentType).toBe('application/javascript; charset=utf-8');
  });
});
