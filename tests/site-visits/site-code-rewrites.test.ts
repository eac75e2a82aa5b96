/**
 * A new siteCode rewrites every visit of the site (a new version of each, in one statement), so one PATCH of a
 * few bytes costs the database as much as the site has visits. A tenant's renames rewrite at most
 * SITE_CODE_VISIT_REWRITES_PER_MINUTE visits a minute (in each process): past that a rename is 429 and
 * changes nothing, until the rewrites leave the minute. Found by a hostile-tenant probe: with 100,000 visits
 * on one site each rename took about 2 s of PostgreSQL (and held the embedded database for as long), and the
 * request rate allowed 100 of them a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { createVisit, visitTenant, type VisitTenant, withNewSite } from '../helpers/visits.js';

const BUDGET = 3;
const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let t: TestApp;
let v: VisitTenant;
beforeAll(async () => {
  t = await startTestApp({ clock, config: { siteCodeVisitRewritesPerMinute: BUDGET } });
  v = await visitTenant(t, { assets: 0 });
});
afterAll(async () => t?.close());

function rename(site: VisitTenant, siteCode: string) {
  return t.http.patch(`/api/v1/sites/${site.siteId}`, { token: site.fullToken, json: { siteCode } });
}

describe('renames of sites with visits, per tenant and minute', () => {
  it('refuses a rename once the minute holds the budget of rewritten visits, and changes nothing', async () => {
    const site = await withNewSite(t, v, 0);
    const visits = [await createVisit(t, site), await createVisit(t, site)];
    expect((await rename(site, `${site.siteCode}-1`)).status).toBe(200);
    // 2 of 3 used: the next rename is admitted, though it takes the minute past the budget.
    expect((await rename(site, `${site.siteCode}-2`)).status).toBe(200);

    clock.advance(10_000);
    const refused = await rename(site, `${site.siteCode}-3`);
    expectProblem(refused, 429, 'rate-limit-exceeded');
    expect(refused.body.detail).toMatch(/visits/);
    expect(Number(refused.headers.get('retry-after'))).toBe(50);

    const current = await t.http.get(`/api/v1/sites/${site.siteId}`, { token: site.fullToken });
    expect(current.body.data.attributes.siteCode).toBe(`${site.siteCode}-2`);
    expect(current.body.data.meta.version).toBe(3);
    for (const visit of visits) {
      const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: site.fullToken });
      expect(read.body.data.meta.version).toBe(3);
      expect(read.body.data.attributes.clientSiteId).toBe(`${site.siteCode}-2`);
    }

    // Renaming a site without visits rewrites none, and other changes of the site are not renames.
    const empty = await withNewSite(t, v, 0);
    expect((await rename(empty, `${empty.siteCode}-1`)).status).toBe(200);
    const named = await t.http.patch(`/api/v1/sites/${site.siteId}`, { token: site.fullToken, json: { name: 'HQ' } });
    expect(named.status).toBe(200);

    // Another tenant's renames are its own.
    const other = await visitTenant(t, { assets: 0 });
    await createVisit(t, other);
    expect((await rename(other, `${other.siteCode}-1`)).status).toBe(200);

    // Once the rewrites are a minute old the rename goes through.
    clock.advance(50_000);
    const later = await rename(site, `${site.siteCode}-3`);
    expect(later.status, later.text).toBe(200);
    const visit = await t.http.get(`/api/v1/site-visits/${visits[0]!.id}`, { token: site.fullToken });
    expect(visit.body.data.meta.version).toBe(4);
  });
});
