/**
 * PostgreSQL only (PGlite runs one transaction at a time): a visit create that names a site by the code
 * a concurrent PATCH of the site is changing. The create waits for the rename and then no longer finds the
 * code (404), as if it came after it. It used to read the old code, insert once the rename had committed
 * (the rename's move of the site's visits had not seen it), and answer version 1 with the old
 * clientSiteId (its ticket.created event too) while the stored version 1 showed the new one.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseUrlOf, startTestApp, type TestApp } from '../helpers/app.js';
import { waitingForLocks } from '../helpers/lock-waits.js';
import { expectProblem } from '../helpers/problems.js';
import { createVisit, postVisit, visitTenant, type VisitTenant, withNewSite } from '../helpers/visits.js';

const url = inject('databaseUrl');

describe.skipIf(!url)('a visit create racing a change of its site code', () => {
  let t: TestApp;
  let v: VisitTenant;
  beforeAll(async () => {
    t = await startTestApp();
    v = await visitTenant(t);
  });
  afterAll(async () => t?.close());

  /**
   * Starts a PATCH of the site's code and holds it inside its transaction (another connection holds a visit
   * of the site, which the PATCH must move to a new version), sends the create meanwhile, then lets the PATCH
   * commit. Answers both responses.
   */
  async function createDuringRename(site: VisitTenant, createBody: Record<string, unknown>) {
    const held = await createVisit(t, site);
    const other = new pg.Client({ connectionString: databaseUrlOf(t.database) });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select 1 from site_visits where id = $1 for update', [held.id]);
      const renamed = t.http.patch(`/api/v1/sites/${site.siteId}`, {
        token: site.fullToken,
        json: { siteCode: `${site.siteCode}-new` },
      });
      await waitingForLocks(other, 1);
      const created = postVisit(t, site, createBody);
      await waitingForLocks(other, 2);
      await other.query('commit');
      return { renamed: await renamed, created: await created };
    } finally {
      await other.end();
    }
  }

  it('a create whose references an earlier create found (one statement) is 404 once the code has changed', async () => {
    const site = await withNewSite(t, v);
    const { renamed, created } = await createDuringRename(site, {});
    expect(renamed.status).toBe(200);
    expectProblem(created, 404, 'not-found');
  });

  it('a create with site assets (in a transaction) is 404 once the code has changed', async () => {
    const site = await withNewSite(t, v);
    const { renamed, created } = await createDuringRename(site, { siteAssetIds: [site.assetIds[0]] });
    expect(renamed.status).toBe(200);
    expectProblem(created, 404, 'not-found');
  });

  it('whatever the create answers, it matches the visit as stored at that version', async () => {
    const site = await withNewSite(t, v);
    const { created } = await createDuringRename(site, {});
    if (created.status !== 201) return;
    const read = await t.http.get(`/api/v1/site-visits/${created.body.data.id}`, { token: v.fullToken });
    expect(read.body.data.meta.version).toBe(created.body.data.meta.version);
    expect(read.body.data.attributes.clientSiteId).toBe(created.body.data.attributes.clientSiteId);
  });
});
