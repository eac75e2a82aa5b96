/**
 * GET /metrics while the database is unreachable: the figures read from it at scrape time (the due
 * deliveries) are left out, and everything else is still served, on the main port and on METRICS_PORT.
 * An outage is when an operator most needs the request counts (the 503s), the pool and the process figures;
 * before, the failed query failed the whole scrape (503 on the main port, 500 on METRICS_PORT).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registrySource, startMetricsServer } from '../../src/runtime/metrics.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

describe('GET /metrics with the database gone', () => {
  it('answers every figure but those read from the database, on both ports', async () => {
    const tenant = await tenantWithToken(t);
    await t.database.close();
    expectProblem(await t.http.get('/api/v1/sites', { token: tenant.token }), 503, 'service-unavailable');

    const main = await t.http.get('/metrics', { token: t.adminToken });
    expect(main.status, main.text).toBe(200);
    expect(main.text).toMatch(/^http_requests_total\{method="GET",route="\/api\/v1\/sites",status="503"\} 1$/m);
    expect(main.text).not.toMatch(/^webhook_deliveries_due /m);
    expect(main.text).not.toMatch(/^webhook_oldest_due_delivery_age_seconds /m);

    const server = await startMetricsServer(registrySource(t.metrics.registry), 0, '127.0.0.1');
    try {
      const { port } = server.address() as { port: number };
      const own = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(own.status).toBe(200);
      expect(await own.text()).toContain('# TYPE http_requests_total counter');
    } finally {
      server.close();
    }
  });
});
