/**
 * A site or visit named in the path by the client's own code rather than its id (`GET /api/v1/sites/S-42`,
 * `svc trigger INC-1001 complete-lifecycle`): a visit names its site by siteCode, so the code is the natural
 * guess, and "Site was not found." sent the integrator looking for a missing site. The 404 now says what the
 * ids look like and the list filter that finds theirs; an unknown id of the right kind keeps the plain detail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problems.js';
import { createVisit, type VisitTenant, visitTenant } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
let ticket: string;
beforeAll(async () => {
  t = await startTestApp();
  v = await visitTenant(t);
  ticket = (await createVisit(t, v)).attributes.clientTicketNumber;
});
afterAll(async () => t?.close());

describe('a 404 for a path naming a site or visit by the client’s own code', () => {
  it('GET and PATCH of a site by its siteCode say that ids begin with site_ and how to find it by siteCode', async () => {
    const path = `/api/v1/sites/${encodeURIComponent(v.siteCode)}`;
    for (const response of [
      await t.http.get(path, { token: v.token }),
      await t.http.patch(path, { token: v.token, json: { name: 'x' }, headers: { 'if-match': '"1"' } }),
    ]) {
      expectProblem(response, 404, 'not-found');
      expect(response.body.detail).toBe(
        `Site ${JSON.stringify(v.siteCode)} was not found: site ids begin with site_. ` +
          `To find one by your own siteCode: GET /api/v1/sites?siteCode=${encodeURIComponent(v.siteCode)}`,
      );
    }
    const found = await t.http.get(`/api/v1/sites?siteCode=${encodeURIComponent(v.siteCode)}`, { token: v.token });
    expect(found.body.data[0].id).toBe(v.siteId);
  });

  it('GET, PATCH and the sandbox simulator of a visit by its ticket number name the clientTicketNumber filter', async () => {
    const path = `/api/v1/site-visits/${encodeURIComponent(ticket)}`;
    for (const response of [
      await t.http.get(path, { token: v.token }),
      await t.http.patch(path, { token: v.token, json: { description: 'x' } }),
      await t.http.post(`/api/v1/sandbox/site-visits/${encodeURIComponent(ticket)}/simulate`, {
        token: v.token,
        json: { action: 'complete-lifecycle' },
      }),
    ]) {
      expectProblem(response, 404, 'not-found');
      expect(response.body.detail).toContain(
        `Site visit ${JSON.stringify(ticket)} was not found: site visit ids begin with visit_.`,
      );
      expect(response.body.detail).toContain(
        `GET /api/v1/site-visits?clientTicketNumber=${encodeURIComponent(ticket)}`,
      );
    }
  });

  it('an unknown id of the right kind keeps the plain detail', async () => {
    for (const [path, detail] of [
      ['/api/v1/sites/site_00000000000000000000000000', 'Site was not found.'],
      ['/api/v1/site-visits/visit_00000000000000000000000000', 'Site visit was not found.'],
    ]) {
      const response = await t.http.get(path!, { token: v.token });
      expectProblem(response, 404, 'not-found');
      expect(response.body.detail).toBe(detail);
    }
  });
});
