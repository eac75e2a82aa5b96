/**
 * Arrange steps for site-visit tests: a fresh tenant with a site, an Active project, an item and site
 * assets (provisioned through the client and operator APIs), and a valid visit body for it.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { startTestApp, type TestApp, type TestAppOptions } from './app.js';
import { admin, createTenant, type Operator, siteBody, tokenFor, type TestTenant } from './tenants.js';

export interface VisitTenant extends TestTenant {
  /** A token with the requested scopes (all by default). */
  token: string;
  /** A token with every scope, for arranging. */
  fullToken: string;
  siteCode: string;
  siteId: string;
  projectId: number;
  itemName: string;
  assetIds: number[];
}

export async function createProject(t: Operator, tenantId: string, body: Record<string, unknown> = {}) {
  const response = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/projects`, {
    projectId: randomInt(1, 1_000_000_000),
    projectName: 'Rollout',
    ...body,
  });
  if (response.status !== 201) throw new Error(`project create failed: ${response.status} ${response.text}`);
  return response.body.data as { projectId: number | string; projectName: string; status: string };
}

export async function createItem(t: Operator, tenantId: string, body: Record<string, unknown> = {}) {
  const response = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/items`, {
    itemId: randomInt(1, 1_000_000_000),
    itemName: `Kiosk ${randomUUID().slice(0, 8)}`,
    ...body,
  });
  if (response.status !== 201) throw new Error(`item create failed: ${response.status} ${response.text}`);
  return response.body.data as { itemId: number | string; itemName: string };
}

/** A site of the tenant (through the client API) with `assets` site assets (through the operator API). */
export async function createSiteWithAssets(
  t: Operator,
  tenantId: string,
  fullToken: string,
  assets = 2,
  overrides: Record<string, unknown> = {},
) {
  const site = await t.http.post('/api/v1/sites', { token: fullToken, json: siteBody(overrides) });
  if (site.status !== 201) throw new Error(`site create failed: ${site.status} ${site.text}`);
  const siteCode: string = site.body.data.attributes.siteCode;
  const assetIds: number[] = [];
  for (let index = 1; index <= assets; index++) {
    const asset = await admin(t, 'POST', `/admin/v1/tenants/${tenantId}/site-assets`, {
      siteCode,
      uniqueId: `${siteCode}-A${index}`,
      friendlyLocation: `Aisle ${index}`,
      assetStatus: 'Installed',
      assetDisplay: `Kiosk ${index} (aisle ${index})`,
    });
    if (asset.status !== 201) throw new Error(`site asset create failed: ${asset.status} ${asset.text}`);
    assetIds.push(asset.body.data.siteAssetId);
  }
  return { siteCode, siteId: site.body.data.id as string, assetIds };
}

/** The tenant again with a new site of its own (cheaper than a new tenant: no credentials to hash). */
export async function withNewSite(t: Operator, v: VisitTenant, assets = 2): Promise<VisitTenant> {
  return { ...v, ...(await createSiteWithAssets(t, v.tenantId, v.fullToken, assets)) };
}

export async function visitTenant(
  t: Operator,
  options: { scope?: string; scopes?: string[]; assets?: number } = {},
): Promise<VisitTenant> {
  const tenant = await createTenant(t, options.scopes ? { scopes: options.scopes } : {});
  const fullToken = await tokenFor(t, tenant);
  const token = options.scope ? await tokenFor(t, tenant, options.scope) : fullToken;
  const project = await createProject(t, tenant.tenantId);
  const item = await createItem(t, tenant.tenantId);
  const site = await createSiteWithAssets(t, tenant.tenantId, fullToken, options.assets ?? 2);
  return { ...tenant, token, fullToken, ...site, projectId: project.projectId as number, itemName: item.itemName };
}

/** A valid create body for the tenant's site, project and item. */
export function visitBody(
  v: Pick<VisitTenant, 'siteCode' | 'projectId' | 'itemName'>,
  overrides: Record<string, unknown> = {},
) {
  return {
    clientSiteId: v.siteCode,
    description: 'Replace the card reader',
    clientTicketNumber: `T-${randomUUID().slice(0, 12)}`,
    serviceType: 'Break / Fix',
    jobInstructions: 'Bring a spare reader. Call the store manager on arrival.',
    projectId: v.projectId,
    itemName: v.itemName,
    startDate: '2026-12-01T09:00:00Z',
    dueDate: '2026-12-03T17:00:00Z',
    arePartsRequired: true,
    schedulingRule: 'Date Range',
    ...overrides,
  };
}

/** A test file's app and a visit tenant of it, for its beforeAll (the file closes the app in its afterAll). */
export async function startVisitApp(options: TestAppOptions = {}): Promise<{ t: TestApp; v: VisitTenant }> {
  const t = await startTestApp(options);
  return { t, v: await visitTenant(t) };
}

/** POSTs the create of a visit (the valid body with `overrides`) and answers the response, whatever it is. */
export function postVisit(t: Operator, v: VisitTenant, overrides: Record<string, unknown> = {}) {
  return t.http.post('/api/v1/site-visits', { token: v.fullToken, json: visitBody(v, overrides) });
}

export async function createVisit(t: Operator, v: VisitTenant, overrides: Record<string, unknown> = {}) {
  const response = await postVisit(t, v, overrides);
  if (response.status !== 201) throw new Error(`visit create failed: ${response.status} ${response.text}`);
  return response.body.data as { id: string; attributes: Record<string, any>; meta: { version: number; etag: string } };
}

/** POST /admin/v1/tenants/{tenantId}/site-visits: a visit created by the operator, outside the client API. */
export async function operatorCreateVisit(t: Operator, v: VisitTenant, overrides: Record<string, unknown> = {}) {
  return admin(t, 'POST', `/admin/v1/tenants/${v.tenantId}/site-visits`, visitBody(v, overrides));
}

/** POST /admin/v1/site-visits/{visitId}/workflow with one action. */
export async function workflowAction(t: Operator, visitId: string, action: unknown) {
  return admin(t, 'POST', `/admin/v1/site-visits/${visitId}/workflow`, action);
}

/** The actions that take a visit from New to each later status, in order. */
const WALK = [
  { action: 'schedule', scheduledDate: '2026-12-02' },
  { action: 'dispatch' },
  { action: 'complete', qualityReviewPassed: true },
];
const STATUS_AFTER = ['Scheduled', 'Dispatched', 'Completed'];

/** A new visit of the tenant, walked through the workflow to `status`. */
export async function visitInStatus(
  t: Operator,
  v: VisitTenant,
  status: 'New' | 'Scheduled' | 'Dispatched' | 'Completed',
) {
  const visit = await createVisit(t, v);
  for (const action of WALK.slice(0, STATUS_AFTER.indexOf(status) + 1)) {
    const response = await workflowAction(t, visit.id, action);
    if (response.status !== 200)
      throw new Error(`workflow ${action.action} failed: ${response.status} ${response.text}`);
  }
  return visit;
}
