/**
 * Hostile-tenant probes of what surrounds the console: no other origin may read the operator API (no CORS), the
 * console may not be framed and leaks no address, and no error answer is HTML, however much of a hostile
 * path it repeats (each held when written; kept so that none regresses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

const ELSEWHERE = 'https://tenant.example';

describe('the operator API and the console, seen from elsewhere', () => {
  it('another origin may not read the operator API: no CORS answer, to a preflight or a request', async () => {
    const preflight = await t.http.request('OPTIONS', '/admin/v1/tenants', {
      headers: {
        origin: ELSEWHERE,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(400);
    const read = await t.http.get('/admin/v1/tenants', { token: t.adminToken, headers: { origin: ELSEWHERE } });
    expect(read.status).toBe(200);
    for (const response of [preflight, read]) {
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('the console may not be framed, sends no referrer, and no file of it is sniffed', async () => {
    for (const path of ['/console', '/console/app.js', '/console/console.css', '/console/vendor/preact.mjs']) {
      const response = await t.http.get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('no error answer is HTML, whatever of the path it repeats', async () => {
    const markup = encodeURIComponent('<svg onload=alert(1)>');
    for (const path of [
      `/console/${markup}.js`,
      `/console/vendor/${markup}.mjs`,
      `/problems/${markup}`,
      `/admin/v1/${markup}`,
      `/api/v1/${markup}`,
      `/${markup}`,
    ]) {
      const response = await t.http.get(path);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.contentType, path).toMatch(/^application\/(problem\+)?json/);
    }
  });
});
