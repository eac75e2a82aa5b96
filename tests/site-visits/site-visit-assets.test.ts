import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  createSiteWithAssets,
  createVisit,
  visitBody,
  visitTenant,
  type VisitTenant,
  withNewSite,
} from '../helpers/visits.js';

let t: TestApp;
let tenant: VisitTenant;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await visitTenant(t, { assets: 0 });
});
afterAll(async () => t?.close());

function patch(token: string, id: string, json: unknown, headers: Record<string, string> = {}) {
  return t.http.patch(`/api/v1/site-visits/${id}`, { token, json, headers });
}

describe('assigning site assets on create', () => {
  it('shows each assigned asset with all six fields and the summary, in the order given; duplicates count once', async () => {
    const v = await withNewSite(t, tenant, 3);
    const [a1, a2, a3] = v.assetIds as [number, number, number];
    const response = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { siteAssetIds: [a3, a1, a3, a1] }),
    });
    expect(response.status).toBe(201);
    const { siteVisitAssets, assetsToService } = response.body.data.attributes;
    expect(siteVisitAssets).toEqual([
      {
        siteVisitAssetId: expect.any(Number),
        siteAssetId: a3,
        uniqueId: `${v.siteCode}-A3`,
        friendlyLocation: 'Aisle 3',
        assetStatus: 'Installed',
        assetDisplay: 'Kiosk 3 (aisle 3)',
      },
      {
        siteVisitAssetId: expect.any(Number),
        siteAssetId: a1,
        uniqueId: `${v.siteCode}-A1`,
        friendlyLocation: 'Aisle 1',
        assetStatus: 'Installed',
        assetDisplay: 'Kiosk 1 (aisle 1)',
      },
    ]);
    expect(siteVisitAssets[0].siteVisitAssetId).not.toBe(siteVisitAssets[1].siteVisitAssetId);
    expect(assetsToService).toBe(`Kiosk 3 (aisle 3) [${v.siteCode}-A3]; Kiosk 1 (aisle 1) [${v.siteCode}-A1]`);
    expect(siteVisitAssets.map((asset: { siteAssetId: number }) => asset.siteAssetId)).not.toContain(a2);
  });

  it('shows "" and [] when nothing is assigned (omitted or [])', async () => {
    const v = await withNewSite(t, tenant);
    for (const extra of [{}, { siteAssetIds: [] }]) {
      const response = await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v, extra) });
      expect(response.body.data.attributes).toMatchObject({ assetsToService: '', siteVisitAssets: [] });
    }
  });

  it('lets two visits of one site share an asset', async () => {
    const v = await withNewSite(t, tenant);
    const one = await createVisit(t, v, { siteAssetIds: [v.assetIds[0]] });
    const two = await createVisit(t, v, { siteAssetIds: [v.assetIds[0]] });
    expect(one.attributes.siteVisitAssets[0].siteAssetId).toBe(two.attributes.siteVisitAssets[0].siteAssetId);
    expect(one.attributes.siteVisitAssets[0].siteVisitAssetId).not.toBe(
      two.attributes.siteVisitAssets[0].siteVisitAssetId,
    );
  });
});

describe('changing the assignment with PATCH', () => {
  it('leaves the assignment unchanged when siteAssetIds is omitted', async () => {
    const v = await withNewSite(t, tenant);
    const visit = await createVisit(t, v, { siteAssetIds: v.assetIds });
    const response = await patch(v.token, visit.id, { description: 'New description' });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes.siteVisitAssets).toEqual(visit.attributes.siteVisitAssets);
    expect(response.body.data.attributes.assetsToService).toBe(visit.attributes.assetsToService);
  });

  it('clears every assignment with [] and counts it as a change', async () => {
    const v = await withNewSite(t, tenant);
    const visit = await createVisit(t, v, { siteAssetIds: v.assetIds });
    const response = await patch(v.token, visit.id, { siteAssetIds: [] });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes).toMatchObject({ siteVisitAssets: [], assetsToService: '' });
    expect(response.body.data.meta.version).toBe(2);
  });

  it('replaces the assignment, keeping the siteVisitAssetId of an asset that stays', async () => {
    const v = await withNewSite(t, tenant, 3);
    const [a1, a2, a3] = v.assetIds as [number, number, number];
    const visit = await createVisit(t, v, { siteAssetIds: [a1, a2] });
    const kept = visit.attributes.siteVisitAssets.find((asset: { siteAssetId: number }) => asset.siteAssetId === a2);
    const response = await patch(v.token, visit.id, { siteAssetIds: [a2, a3] });
    expect(response.status).toBe(200);
    const assets = response.body.data.attributes.siteVisitAssets;
    expect(assets.map((asset: { siteAssetId: number }) => asset.siteAssetId)).toEqual([a2, a3]);
    expect(assets[0].siteVisitAssetId).toBe(kept.siteVisitAssetId);
    expect(response.body.data.meta.version).toBe(2);
  });

  it('does not count the same set (in another order, with duplicates) as a change', async () => {
    const v = await withNewSite(t, tenant);
    const [a1, a2] = v.assetIds as [number, number];
    const visit = await createVisit(t, v, { siteAssetIds: [a1, a2] });
    const response = await patch(v.token, visit.id, { siteAssetIds: [a2, a1, a2] });
    expect(response.status).toBe(200);
    expect(response.body.data.meta.version).toBe(1);
    expect(response.body.data.attributes.updatedAt).toBe(visit.attributes.updatedAt);
  });

  it("refuses assets of another site, another tenant's assets and unknown ids with 409, leaving the assignment", async () => {
    const v = await withNewSite(t, tenant);
    const other = await visitTenant(t);
    const second = await createSiteWithAssets(t, v.tenantId, v.fullToken, 1);
    const visit = await createVisit(t, v, { siteAssetIds: [v.assetIds[0]] });
    for (const siteAssetIds of [[second.assetIds[0]], [other.assetIds[0]], [v.assetIds[1], 42]]) {
      const response = await patch(v.token, visit.id, { siteAssetIds });
      expect(response.status).toBe(409);
      expect(response.body.type).toMatch(/invalid-site-asset$/);
      expect(response.body.detail).toContain(String(siteAssetIds[siteAssetIds.length - 1]));
    }
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.body.data.attributes.siteVisitAssets).toEqual(visit.attributes.siteVisitAssets);
    expect(read.body.data.meta.version).toBe(1);
  });
});

describe('moving a visit to another site', () => {
  it('is refused with 409 site-asset-conflict while assets of the old site stay assigned', async () => {
    const v = await withNewSite(t, tenant);
    const second = await createSiteWithAssets(t, v.tenantId, v.fullToken, 1);
    const visit = await createVisit(t, v, { siteAssetIds: [v.assetIds[0]] });
    const response = await patch(v.token, visit.id, { clientSiteId: second.siteCode });
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/site-asset-conflict$/);
    expect(response.body.detail).toContain(String(v.assetIds[0]));
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(read.body.data.attributes.clientSiteId).toBe(v.siteCode);
  });

  it('succeeds when the same patch replaces the assets with ones of the new site', async () => {
    const v = await withNewSite(t, tenant);
    const second = await createSiteWithAssets(t, v.tenantId, v.fullToken, 1);
    const visit = await createVisit(t, v, { siteAssetIds: v.assetIds });
    const response = await patch(v.token, visit.id, { clientSiteId: second.siteCode, siteAssetIds: second.assetIds });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes.clientSiteId).toBe(second.siteCode);
    expect(
      response.body.data.attributes.siteVisitAssets.map((asset: { siteAssetId: number }) => asset.siteAssetId),
    ).toEqual(second.assetIds);
    expect(response.body.data.meta.version).toBe(2);
  });

  it('succeeds when the same patch clears the assets', async () => {
    const v = await withNewSite(t, tenant);
    const second = await createSiteWithAssets(t, v.tenantId, v.fullToken, 0);
    const visit = await createVisit(t, v, { siteAssetIds: v.assetIds });
    const response = await patch(v.token, visit.id, { clientSiteId: second.siteCode, siteAssetIds: [] });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes).toMatchObject({
      clientSiteId: second.siteCode,
      siteVisitAssets: [],
      assetsToService: '',
    });
  });

  it('refuses replacement assets that belong to the old site', async () => {
    const v = await withNewSite(t, tenant);
    const second = await createSiteWithAssets(t, v.tenantId, v.fullToken, 1);
    const visit = await createVisit(t, v, { siteAssetIds: [v.assetIds[0]] });
    const response = await patch(v.token, visit.id, { clientSiteId: second.siteCode, siteAssetIds: [v.assetIds[0]] });
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/invalid-site-asset$/);
  });

  it('needs nothing else when no asset is assigned', async () => {
    const v = await withNewSite(t, tenant);
    const second = await createSiteWithAssets(t, v.tenantId, v.fullToken, 0);
    const visit = await createVisit(t, v);
    const response = await patch(v.token, visit.id, { clientSiteId: second.siteCode });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes.clientSiteId).toBe(second.siteCode);
  });

  it('is no move when clientSiteId names the current site', async () => {
    const v = await withNewSite(t, tenant);
    const visit = await createVisit(t, v, { siteAssetIds: v.assetIds });
    const response = await patch(v.token, visit.id, { clientSiteId: v.siteCode });
    expect(response.status).toBe(200);
    expect(response.body.data.meta.version).toBe(1);
  });
});
