/**
 * Values the request chose (a code, a ticket number, a reference id, an id to mark), as a problem's text repeats
 * them: by the rule of src/http/request-names.ts, as names are. One holding a bidi override is described (`as
 * sent (holding a control or invisible character (U+202E at character 2))`), never repeated, escaped or not;
 * JSON.stringify, which these problems used, escapes controls but leaves U+202E as it is. A printable one is
 * repeated quoted, as before (tests/http/duplicate-resource.test.ts, own-code-not-found.test.ts). The target
 * URL's parts: tests/unit/webhooks/destination-policy.test.ts; a part's Content-Disposition type:
 * tests/files/multipart-form.errors.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectProblem } from '../helpers/problems.js';
import { admin, siteBody } from '../helpers/tenants.js';
import { createVisit, postVisit, type VisitTenant, visitTenant } from '../helpers/visits.js';

const HELD = 'holding a control or invisible character (U+202E at character 2)';
const AS_SENT = `as sent (${HELD})`;

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => {
  t = await startTestApp();
  v = await visitTenant(t);
});
afterAll(async () => t?.close());

/**
 * The value is not in the problem's text, nor any escape of it. A duplicate's `existing` is the resource that holds
 * the value, named by its id as every answer names it (data, like a resource's id in a list), so it is left out.
 */
function expectNotRepeated(response: TestResponse) {
  const { existing: _existing, ...problem } = response.body;
  expect(JSON.stringify(problem)).not.toMatch(/\u202e|\\u202e/i);
}

/** A new site of the tenant with this siteCode. */
async function siteWithCode(siteCode: string) {
  const created = await t.http.post('/api/v1/sites', { token: v.fullToken, json: siteBody({ siteCode }) });
  expect(created.status, created.text).toBe(201);
  return created;
}

describe('client API', () => {
  it('a duplicate siteCode', async () => {
    await siteWithCode('S\u202E-1');
    const again = await t.http.post('/api/v1/sites', { token: v.fullToken, json: siteBody({ siteCode: 'S\u202E-1' }) });
    expectProblem(again, 409, 'duplicate-resource');
    expect(again.body.detail).toBe(`A site with siteCode ${AS_SENT} already exists for your client.`);
    expectNotRepeated(again);
  });

  it('a clientSiteId, a projectId and an itemName that name nothing', async () => {
    const site = await postVisit(t, v, { clientSiteId: 'X\u202E-9' });
    expectProblem(site, 404, 'not-found');
    expect(site.body.detail).toBe(`Site with siteCode ${AS_SENT} was not found.`);
    const project = await postVisit(t, v, { projectId: 'P\u202E7' });
    expectProblem(project, 409, 'invalid-project');
    expect(project.body.detail).toMatch(
      new RegExp(`^Project as sent \\(${escaped(HELD)}\\) is not one of your projects\\.`),
    );
    const item = await postVisit(t, v, { itemName: 'K\u202Eiosk' });
    expectProblem(item, 404, 'not-found');
    expect(item.body.detail).toBe(`Item named ${AS_SENT} was not found.`);
    for (const response of [site, project, item]) expectNotRepeated(response);
  });

  it('a duplicate clientTicketNumber', async () => {
    await createVisit(t, v, { clientTicketNumber: 'T\u202E-100' });
    const again = await postVisit(t, v, { clientTicketNumber: 'T\u202E-100' });
    expectProblem(again, 409, 'duplicate-resource');
    expect(again.body.detail).toBe(`A site visit with clientTicketNumber ${AS_SENT} already exists for your client.`);
    expectNotRepeated(again);
  });

  it('the site clientSiteId names, in a site asset refusal and a move that leaves assets', async () => {
    await siteWithCode('N\u202E-2');
    const foreign = await postVisit(t, v, { clientSiteId: 'N\u202E-2', siteAssetIds: [v.assetIds[0]] });
    expectProblem(foreign, 409, 'invalid-site-asset');
    expect(foreign.body.detail).toBe(
      `siteAssetIds ${v.assetIds[0]} is not a site asset of site named by clientSiteId (${HELD}).`,
    );
    const visit = await createVisit(t, v, { siteAssetIds: [v.assetIds[0]] });
    const moved = await t.http.patch(`/api/v1/site-visits/${visit.id}`, {
      token: v.fullToken,
      json: { clientSiteId: 'N\u202E-2' },
    });
    expectProblem(moved, 409, 'site-asset-conflict');
    expect(moved.body.detail).toContain(`Send siteAssetIds of site named by clientSiteId (${HELD}) (or [])`);
    for (const response of [foreign, moved]) expectNotRepeated(response);
  });
});

describe('operator API', () => {
  it('a duplicate projectId and itemId of the tenant', async () => {
    const project = { projectId: 'P\u202E-3', projectName: 'Rollout' };
    const path = `/admin/v1/tenants/${v.tenantId}`;
    expect((await admin(t, 'POST', `${path}/projects`, project)).status).toBe(201);
    const again = await admin(t, 'POST', `${path}/projects`, project);
    expectProblem(again, 409, 'duplicate-resource');
    expect(again.body.detail).toBe(`Project ${AS_SENT} already exists for this tenant.`);

    const item = { itemId: 'I\u202E-4', itemName: 'K\u202E-4' };
    expect((await admin(t, 'POST', `${path}/items`, item)).status).toBe(201);
    const twice = await admin(t, 'POST', `${path}/items`, item);
    expectProblem(twice, 409, 'duplicate-resource');
    expect(twice.body.detail).toBe(
      `An item with itemId ${AS_SENT} or itemName ${AS_SENT} already exists for this tenant.`,
    );
    for (const response of [again, twice]) expectNotRepeated(response);
  });

  it('an id to mark handled that names no message', async () => {
    const response = await admin(t, 'POST', '/admin/v1/messages/handled', { messageIds: ['m\u202Esg_1', 'msg_none'] });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({
      messageIds: [`names no message: an id ${HELD}`, 'names no message: msg_none'],
    });
    expectNotRepeated(response);
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
