/**
 * The operator's return label: the operator's view of a visit names a download the operator token opens
 * (it named the client API's, which answers that token 401, and the operator API had no download at all).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, visitTenant, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => {
  t = await startTestApp();
  v = await visitTenant(t);
});
afterAll(async () => t?.close());

async function fetchAs(url: string, token: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('GET /admin/v1/site-visits/{visitId}/return-label', () => {
  it("is the operator view's returnLabel.url, and answers the operator token the latest version", async () => {
    const visit = await createVisit(t, v);
    const label = pdfBytes(4000);
    label.write('operator-copy', 20, 'latin1');
    const uploaded = await t.http.post(`/api/v1/site-visits/${visit.id}/return-label`, {
      token: v.token,
      body: fileForm(label, 'label-42.pdf'),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expect(uploaded.status, uploaded.text).toBe(201);

    const seen = await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`);
    const url = seen.body.data.attributes.returnLabel.url;
    expect(url).toBe(`${t.config.publicBaseUrl}/admin/v1/site-visits/${visit.id}/return-label`);
    const listed = await admin(t, 'GET', `/admin/v1/tenants/${v.tenantId}/site-visits`);
    expect(listed.body.data.find((row: any) => row.id === visit.id).attributes.returnLabel.url).toBe(url);

    const { response, bytes } = await fetchAs(url.replace(t.config.publicBaseUrl, t.baseUrl), t.adminToken);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename=label-42.pdf');
    expect(bytes.equals(label)).toBe(true);
    // An operator answer, kept by no cache, as every one is; the contract hook checks the download as documented.
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect((await admin(t, 'GET', url.replace(t.config.publicBaseUrl, ''))).status).toBe(200);

    // The client's own view keeps the client API's address.
    const client = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.token });
    expect(client.body.data.attributes.returnLabel.url).toBe(
      `${t.config.publicBaseUrl}/api/v1/site-visits/${visit.id}/return-label`,
    );
    // The client's download keeps its own caching.
    const clientDownload = await fetchAs(
      client.body.data.attributes.returnLabel.url.replace(t.config.publicBaseUrl, t.baseUrl),
      v.token,
    );
    expect(clientDownload.response.headers.get('cache-control')).toBe('private, no-cache');
  });

  it('is 404 before the first upload and for an unknown visit; a client token is 401', async () => {
    const visit = await createVisit(t, v);
    const path = `/admin/v1/site-visits/${visit.id}/return-label`;
    const none = await admin(t, 'GET', path);
    expect(none.status).toBe(404);
    expect(none.body.detail).toMatch(/nothing uploaded yet/);
    expect((await admin(t, 'GET', '/admin/v1/site-visits/visit_0000000000000000000000000/return-label')).status).toBe(
      404,
    );
    expect((await fetchAs(`${t.baseUrl}${path}`, v.token)).response.status).toBe(401);
  });
});
