/**
 * GET /admin/v1/tenants/{tenantId}/site-visits: the tenant's newest visits, at most `limit` and at most 1 MiB of
 * them, as a client page stops; `meta.omitted` counts the visits the size left out. Found by a hostile-tenant
 * probe: 100 visits with their longest texts and 99 return-label versions each made a 12.4 MB answer that took
 * 250 to 350 ms of the event loop (another request's /health 138 ms).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_BYTES } from '../../src/http/pagination.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { fileForm, MULTIPART_CONTENT_TYPE, repeatFileVersions } from '../helpers/multipart.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, type VisitTenant, visitTenant } from '../helpers/visits.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const escaped = (length: number) => '\u0001'.repeat(length);
const latest = (v: VisitTenant, query = '') => admin(t, 'GET', `/admin/v1/tenants/${v.tenantId}/site-visits${query}`);

describe("the operator's latest visits", () => {
  it('answers an ordinary list as before: the newest first, at most limit, each as its GET shows it, no meta', async () => {
    const v = await visitTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createVisit(t, v)).id);

    const all = await latest(v);
    expect(all.status).toBe(200);
    expect(Object.keys(all.body)).toEqual(['data']);
    expect(all.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(all.body.data.map((visit: { id: string }) => visit.id)).toEqual([...ids].reverse());
    expect(all.body.data[0]).toEqual((await admin(t, 'GET', `/admin/v1/site-visits/${ids[3]}`)).body.data);

    const two = await latest(v, '?limit=2');
    expect(two.body).toEqual({ data: all.body.data.slice(0, 2) });
  });

  it('stops at 1 MiB of visits and says how many of the limit it left out', async () => {
    const v = await visitTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const visit = await createVisit(t, v, { description: escaped(2_000), jobInstructions: escaped(3_000) });
      const uploaded = await t.http.post(`/api/v1/site-visits/${visit.id}/return-label`, {
        token: v.fullToken,
        body: fileForm(Buffer.from('%PDF-1.4 label')),
        headers: { 'content-type': MULTIPART_CONTENT_TYPE },
      });
      expect(uploaded.status).toBe(201);
      ids.push(visit.id);
    }
    // 99 versions of each label, as 98 more uploads would leave.
    await repeatFileVersions(t, v.tenantId, 99);

    const answer = await latest(v, '?limit=200');
    expect(answer.status).toBe(200);
    const shown: { id: string }[] = answer.body.data;
    expect(Buffer.byteLength(answer.text)).toBeLessThanOrEqual(PAGE_BYTES + 100);
    expect(shown.length).toBeGreaterThan(1);
    expect(shown.length).toBeLessThan(40);
    // The newest, in order; the rest counted.
    expect(shown.map((visit) => visit.id)).toEqual([...ids].reverse().slice(0, shown.length));
    expect(answer.body.meta).toEqual({ omitted: 40 - shown.length });
    expect(shown[0]).toMatchObject({ attributes: { returnLabel: { versions: { length: 99 } } } });

    // The next visit would not have fitted; a limit the size does not reach leaves nothing out.
    const bytes = shown.reduce((sum, visit) => sum + Buffer.byteLength(JSON.stringify(visit)) + 1, 0);
    const next = (await admin(t, 'GET', `/admin/v1/site-visits/${ids[39 - shown.length]}`)).body.data;
    expect(bytes + Buffer.byteLength(JSON.stringify(next))).toBeGreaterThan(PAGE_BYTES);
    expect((await latest(v, '?limit=3')).body).toEqual({ data: shown.slice(0, 3) });
  });
});
