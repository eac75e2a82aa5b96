/**
 * A hostile tenant's requests against the rule that no problem grows with the request: whatever a body
 * holds, the refusal that names what is wrong with it stays a few kilobytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createSiteWithAssets, createVisit, postVisit, visitTenant, type VisitTenant } from '../helpers/visits.js';

/** Far above any honest refusal, far below what the largest body allowed would make if each item were named. */
const PROBLEM_BYTES = 3_000;

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => {
  t = await startTestApp();
  const tenant = await visitTenant(t, { assets: 0 });
  // A site code near the longest there is (100; its assets' uniqueIds add 3): a refusal that repeats it per id
  // grows fastest.
  const longCode = `LONG-${'c'.repeat(91)}`;
  v = { ...tenant, ...(await createSiteWithAssets(t, tenant.tenantId, tenant.fullToken, 2, { siteCode: longCode })) };
});
afterAll(async () => t?.close());

/** The most site asset ids a body may hold (the schema's maxItems), none of them the site's. */
const UNKNOWN_IDS = Array.from({ length: 200 }, (_, index) => 2_000_000_000 + index);

function expectBoundedInvalidSiteAsset(response: { status: number; text: string; body: any }) {
  expect(response.status).toBe(409);
  expect(response.body.type).toMatch(/invalid-site-asset$/);
  expect(response.text.length).toBeLessThan(PROBLEM_BYTES);
  // The first ids are still named, and the rest counted, so the integrator knows how many are wrong.
  expect(response.body.detail).toContain(String(UNKNOWN_IDS[0]));
  expect(response.body.detail).toMatch(/and 190 more/);
  expect(response.body.errors.siteAssetIds.join(' ')).toMatch(/190 more/);
}

describe('409 invalid-site-asset', () => {
  it('names a bounded number of the 200 unknown ids of a create, counting the others', async () => {
    expectBoundedInvalidSiteAsset(await postVisit(t, v, { siteAssetIds: UNKNOWN_IDS }));
  });

  it('names a bounded number of the 200 unknown ids of a patch, counting the others', async () => {
    const visit = await createVisit(t, v, { siteAssetIds: v.assetIds });
    const response = await t.http.patch(`/api/v1/site-visits/${visit.id}`, {
      token: v.token,
      json: { siteAssetIds: UNKNOWN_IDS },
    });
    expectBoundedInvalidSiteAsset(response);
  });

  it('still names every id when there are few', async () => {
    const response = await postVisit(t, v, { siteAssetIds: [v.assetIds[0], ...UNKNOWN_IDS.slice(0, 3)] });
    expect(response.status).toBe(409);
    expect(response.body.errors.siteAssetIds).toHaveLength(3);
    for (const id of UNKNOWN_IDS.slice(0, 3)) expect(response.body.detail).toContain(String(id));
    expect(response.body.detail).not.toContain(String(v.assetIds[0]));
  });
});
