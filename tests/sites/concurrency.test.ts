import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('concurrent PATCHes', () => {
  it('of 50 writers holding the same ETag exactly one succeeds; the rest are 409 version-conflict', async () => {
    const { token } = await tenantWithToken(t);
    const id = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        t.http.patch(`/api/v1/sites/${id}`, {
          token,
          json: { name: `Writer ${index}` },
          headers: { 'if-match': '"1"' },
        }),
      ),
    );
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    for (const response of responses.filter((r) => r.status !== 200)) expectProblem(response, 409, 'version-conflict');
    const read = await t.http.get(`/api/v1/sites/${id}`, { token });
    expect(read.body.data.meta.version).toBe(2);
    expect(read.body.data.attributes.name).toBe(winners[0]!.body.data.attributes.name);
  });

  it('without If-Match every change is applied and counted', async () => {
    const { token } = await tenantWithToken(t);
    const id = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        t.http.patch(`/api/v1/sites/${id}`, { token, json: { city: `City ${index}` } }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    expect(new Set(responses.map((response) => response.body.data.meta.version))).toEqual(
      new Set([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
    );
    expect((await t.http.get(`/api/v1/sites/${id}`, { token })).body.data.meta.version).toBe(11);
  });

  it('two sites patched to the same free siteCode at once: one wins, the other is 409 duplicate-resource', async () => {
    const { token } = await tenantWithToken(t);
    const a = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
    const b = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
    const responses = await Promise.all(
      [a, b].map((id) => t.http.patch(`/api/v1/sites/${id}`, { token, json: { siteCode: 'CONTESTED' } })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
    expectProblem(responses.find((response) => response.status === 409)!, 409, 'duplicate-resource');
  });
});
