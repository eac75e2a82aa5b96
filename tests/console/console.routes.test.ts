/**
 * What the console is served as: one static page with a strict CSP, its own scripts, and the vendor
 * modules from node_modules (hooks pointed at the local preact); nothing when the operator API is off.
 * Also the operator reads it relies on: a tenant's latest visits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, visitTenant } from '../helpers/visits.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

describe('GET /console', () => {
  it("is a static page with a strict CSP, loading only this origin's modules", async () => {
    const page = await t.http.get('/console');
    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    // No HTML sink takes a string: a tenant's text can only ever be text (tenant-text.browser.test.ts).
    expect(csp).toContain("require-trusted-types-for 'script'; trusted-types 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    // No inline script, no token: a module script from /console and a stylesheet.
    expect(page.text).toContain('<script type="module" src="/console/app.js"></script>');
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.text).not.toContain(t.adminToken);

    for (const file of ['app.js', 'api.js', 'ui.js', 'tenants.js', 'deliveries.js', 'inbox.js', 'console.css']) {
      const asset = await t.http.get(`/console/${file}`);
      expect(asset.status, file).toBe(200);
      expect(asset.contentType, file).toMatch(file.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
    }
    const hooks = await t.http.get('/console/vendor/hooks.mjs');
    expect(hooks.status).toBe(200);
    expect(hooks.text).toContain('from"./preact.mjs"');
    expect(hooks.text).not.toMatch(/from\s*["']preact["']/);
    expect((await t.http.get('/console/vendor/preact.mjs')).status).toBe(200);
    expect((await t.http.get('/console/vendor/htm.mjs')).status).toBe(200);
  });

  it('serves nothing else', async () => {
    expectProblem(await t.http.get('/console/vendor/evil.mjs'), 404, 'not-found');
    expectProblem(await t.http.get('/console/missing.js'), 404, 'not-found');
    expectProblem(await t.http.get('/console/..%2Fpackage.json'), 404, 'not-found');
    expectProblem(await t.http.get('/console/index.html.bak'), 404, 'not-found');
  });

  it('does not exist without the operator API (nor does GET /metrics on the main port)', async () => {
    const off = await startTestApp({
      config: { environment: 'production' },
      database: t.database,
      keys: { ...t.keys, adminToken: undefined },
    });
    try {
      expectProblem(await off.http.get('/console'), 404, 'not-found');
      expectProblem(await off.http.get('/metrics'), 404, 'not-found');
    } finally {
      await off.close();
    }
  });
});

describe('GET /admin/v1/tenants/{tenantId}/site-visits', () => {
  it("lists the tenant's latest visits, newest first, with their workflow state", async () => {
    const v = await visitTenant(t);
    const first = await createVisit(t, v);
    const second = await createVisit(t, v);
    const listed = await admin(t, 'GET', `/admin/v1/tenants/${v.tenantId}/site-visits`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((visit: { id: string }) => visit.id)).toEqual([second.id, first.id]);
    expect(listed.body.data[0].attributes).toMatchObject({ status: 'New', fieldRepName: null, scheduledDate: null });
    expect((await admin(t, 'GET', `/admin/v1/tenants/${v.tenantId}/site-visits?limit=1`)).body.data).toHaveLength(1);
    expectProblem(await admin(t, 'GET', '/admin/v1/tenants/tnt_unknown/site-visits'), 404, 'not-found');
  });
});
