import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { describeAuthentication } from '../helpers/scopes.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { tokenFor } from '../helpers/tenants.js';
import { createVisit, visitBody, visitTenant, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
let owner: VisitTenant;
let intruder: VisitTenant;
let visitId: string;
beforeAll(async () => {
  t = await startTestApp();
  [owner, intruder] = await Promise.all([visitTenant(t), visitTenant(t)]);
  const visit = await createVisit(t, owner, { clientTicketNumber: 'OWNER-1', siteAssetIds: owner.assetIds });
  visitId = visit.id;
  const upload = await t.http.post(`/api/v1/site-visits/${visitId}/return-label`, {
    token: owner.token,
    body: fileForm(pdfBytes(1000)),
    headers: { 'content-type': MULTIPART_CONTENT_TYPE },
  });
  expect(upload.status).toBe(201);
});
afterAll(async () => t?.close());

const ROUTES = [
  { method: 'GET', route: '/api/v1/site-visits', path: () => '/api/v1/site-visits', scope: 'site-visits:read' },
  { method: 'POST', route: '/api/v1/site-visits', path: () => '/api/v1/site-visits', scope: 'site-visits:write' },
  {
    method: 'GET',
    route: '/api/v1/site-visits/{id}',
    path: () => `/api/v1/site-visits/${visitId}`,
    scope: 'site-visits:read',
  },
  {
    method: 'PATCH',
    route: '/api/v1/site-visits/{id}',
    path: () => `/api/v1/site-visits/${visitId}`,
    scope: 'site-visits:write',
  },
  {
    method: 'POST',
    route: '/api/v1/site-visits/{id}/return-label',
    path: () => `/api/v1/site-visits/${visitId}/return-label`,
    scope: 'site-visits:write',
  },
  {
    method: 'GET',
    route: '/api/v1/site-visits/{id}/return-label',
    path: () => `/api/v1/site-visits/${visitId}/return-label`,
    scope: 'site-visits:read',
  },
];

describeAuthentication(
  () => t,
  () => owner,
  ROUTES,
);

describe('tenant isolation', () => {
  it("does not read another tenant's visit", async () => {
    const response = await t.http.get(`/api/v1/site-visits/${visitId}`, { token: intruder.token });
    expect(response.status).toBe(404);
    expect(response.text).not.toContain('OWNER-1');
  });

  it("does not patch another tenant's visit", async () => {
    const response = await t.http.patch(`/api/v1/site-visits/${visitId}`, {
      token: intruder.token,
      json: { description: 'Hijacked' },
    });
    expect(response.status).toBe(404);
    const read = await t.http.get(`/api/v1/site-visits/${visitId}`, { token: owner.token });
    expect(read.body.data.attributes.description).not.toBe('Hijacked');
    expect(read.body.data.meta.version).toBe(2);
  });

  it("does not list or look up another tenant's visits", async () => {
    const list = await t.http.get('/api/v1/site-visits', { token: intruder.token });
    expect(list.body.data.map((visit: { id: string }) => visit.id)).not.toContain(visitId);
    const lookup = await t.http.get('/api/v1/site-visits', {
      token: intruder.token,
      query: { clientTicketNumber: 'OWNER-1' },
    });
    expect(lookup.body.data).toEqual([]);
  });

  it("does not upload to another tenant's visit", async () => {
    const response = await t.http.post(`/api/v1/site-visits/${visitId}/return-label`, {
      token: intruder.token,
      body: fileForm(pdfBytes(1000)),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expect(response.status).toBe(404);
    const read = await t.http.get(`/api/v1/site-visits/${visitId}`, { token: owner.token });
    expect(read.body.data.attributes.returnLabel.versions).toHaveLength(1);
  });

  it("does not download another tenant's return label", async () => {
    const response = await t.http.get(`/api/v1/site-visits/${visitId}/return-label`, { token: intruder.token });
    expect(response.status).toBe(404);
    expect(response.contentType).toMatch(/problem\+json/);
  });

  it("cannot reach another tenant's visit through an Idempotency-Key", async () => {
    const headers = { 'idempotency-key': 'same-key-two-tenants' };
    const mine = await t.http.post('/api/v1/site-visits', { token: owner.token, json: visitBody(owner), headers });
    const theirs = await t.http.post('/api/v1/site-visits', {
      token: intruder.token,
      json: visitBody(intruder),
      headers,
    });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });
});

describe('a token without site-visits:read (write-only)', () => {
  it('gets visit responses without assetsToService and siteVisitAssets, but may assign assets', async () => {
    const writeOnly = await tokenFor(t, owner, 'site-visits:write');
    const created = await t.http.post('/api/v1/site-visits', {
      token: writeOnly,
      json: visitBody(owner, { siteAssetIds: owner.assetIds }),
    });
    expect(created.status).toBe(201);
    expect(created.body.data.attributes).not.toHaveProperty('assetsToService');
    expect(created.body.data.attributes).not.toHaveProperty('siteVisitAssets');
    expect(created.body.data.attributes).toHaveProperty('returnLabel', null);

    const patched = await t.http.patch(`/api/v1/site-visits/${created.body.data.id}`, {
      token: writeOnly,
      json: { siteAssetIds: [owner.assetIds[0]] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes).not.toHaveProperty('siteVisitAssets');
    expect(patched.body.data.meta.version).toBe(2);

    const read = await t.http.get(`/api/v1/site-visits/${created.body.data.id}`, { token: owner.token });
    expect(
      read.body.data.attributes.siteVisitAssets.map((asset: { siteAssetId: number }) => asset.siteAssetId),
    ).toEqual([owner.assetIds[0]]);
  });

  it('gets a replay without the asset attributes even when the original response had them', async () => {
    const writeOnly = await tokenFor(t, owner, 'site-visits:write');
    const body = visitBody(owner, { siteAssetIds: owner.assetIds });
    const headers = { 'idempotency-key': 'replay-to-write-only' };
    const original = await t.http.post('/api/v1/site-visits', { token: owner.token, json: body, headers });
    expect(original.body.data.attributes.siteVisitAssets).toHaveLength(2);
    const replay = await t.http.post('/api/v1/site-visits', { token: writeOnly, json: body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.attributes).not.toHaveProperty('siteVisitAssets');
    expect(replay.body.data.attributes).not.toHaveProperty('assetsToService');
    expect(replay.body.data.id).toBe(original.body.data.id);
  });
});
