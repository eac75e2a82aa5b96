/**
 * Site-visit rules (SPEC: Site visit, Site visits endpoint rules, Site-asset rules): partial update, lookups
 * and listing here; creation (with its ticket.created event) in creation.ts, re-exported for the routes.
 */
import type { Kysely, Transaction } from 'kysely';
import { notBefore } from '../../lib/clock.js';
import type { Database, SiteRow, SiteVisitRow, SiteVisitUpdate } from '../../db/schema.js';
import { changedColumns, suppliedColumns } from '../../db/column-changes.js';
import { refusingDuplicate } from '../../db/errors.js';
import { assertIfMatch } from '../../http/concurrency.js';
import { type CursorCodec, type ReadPage, readPage } from '../../http/pagination.js';
import { notFound, notFoundById, Problem } from '../../http/problem.js';
import { valueOrWhy } from '../../http/request-names.js';
import { resolveItem, resolveProject } from '../reference/service.js';
import { resolveSiteAssets } from '../site-assets/service.js';
import { getSite, getSiteByCode } from '../sites/service.js';
import { SITE_VISIT_TYPE } from './representation.js';
import * as repository from './repository.js';
import { TICKET_CONSTRAINT, type VisitRecord } from './repository.js';
import type { SiteVisitListQueryValue, SiteVisitPatch } from './schemas.js';
import { assertDueNotBeforeStart, duplicateTicket, PLAIN_COLUMNS, parseDate } from './visit-fields.js';

export { createVisit, type NewVisitServing, visitCreation } from './creation.js';
export { siteCodeFollower } from './site-code-follower.js';

/** Whether the visit is the tenant's (a message names its visit). */
export function visitExists(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  return repository.visitExists(db, tenantId, id);
}

/** The tenant's visit (404 otherwise); outside a transaction the read joins the turn's batch (`readVisit`). */
export async function getVisit(db: Kysely<Database>, tenantId: string, id: string): Promise<VisitRecord> {
  const visit = await repository.readVisit(db, tenantId, id);
  if (!visit) throw notFoundById('Site visit', id);
  return visit;
}

/** A visit of whichever tenant owns it (operator API). */
export async function getVisitOfAnyTenant(db: Kysely<Database>, visitId: string): Promise<VisitRecord> {
  const tenantId = await repository.findVisitTenantId(db, visitId);
  const visit = tenantId === undefined ? undefined : await repository.findVisit(db, tenantId, visitId);
  if (!visit) throw notFound('Site visit');
  return visit;
}

/** The new assignment when the patch changes it, else undefined; enforces the move-site rule. */
async function assignmentChange(
  tx: Transaction<Database>,
  tenantId: string,
  visit: SiteVisitRow,
  patch: SiteVisitPatch,
  newSite: SiteRow | undefined,
): Promise<{ add: number[]; remove: number[] } | undefined> {
  const current = await repository.listAssignedAssetIds(tx, tenantId, visit.id);
  if (patch.siteAssetIds === undefined) {
    if (newSite === undefined || current.length === 0) return undefined;
    throw new Problem(
      'site-asset-conflict',
      `The visit still has site assets of its current site assigned (${current.join(', ')}). Send siteAssetIds of site ${valueOrWhy(newSite.site_code, 'named by clientSiteId', true)} (or []) in the same request to move it.`,
      { errors: { siteAssetIds: ['must be replaced when clientSiteId moves the visit to another site'] } },
    );
  }
  const site = newSite ?? (await getSite(tx, tenantId, visit.site_id));
  const desired = await resolveSiteAssets(tx, tenantId, site, patch.siteAssetIds);
  const add = desired.filter((id) => !current.includes(id));
  const remove = current.filter((id) => !desired.includes(id));
  return add.length > 0 || remove.length > 0 ? { add, remove } : undefined;
}

/**
 * Applies the supplied fields with the same reference rules as a create. The version grows by one
 * only when a stored value or the asset assignment actually changes.
 */
export async function patchVisit(
  tx: Transaction<Database>,
  tenantId: string,
  id: string,
  patch: SiteVisitPatch,
  ifMatch: string | undefined,
  now: Date,
): Promise<VisitRecord> {
  const visit = await repository.findVisitForUpdate(tx, tenantId, id);
  if (!visit) throw notFoundById('Site visit', id);
  assertIfMatch(ifMatch, visit.version);
  const at = notBefore(now, visit.updated_at);

  const startDate = patch.startDate !== undefined ? parseDate('startDate', patch.startDate) : visit.start_date;
  const dueDate = patch.dueDate !== undefined ? parseDate('dueDate', patch.dueDate) : visit.due_date;
  assertDueNotBeforeStart(startDate, dueDate, patch);

  const changes: SiteVisitUpdate = {};
  if (patch.projectId !== undefined) {
    const project = await resolveProject(tx, tenantId, patch.projectId);
    if (project.project_id !== visit.project_id) changes.project_id = project.project_id;
  }
  let newSite: SiteRow | undefined;
  if (patch.clientSiteId !== undefined) {
    const site = await getSiteByCode(tx, tenantId, patch.clientSiteId);
    if (site.id !== visit.site_id) {
      changes.site_id = site.id;
      newSite = site;
    }
  }
  if (patch.itemName !== undefined) {
    const item = await resolveItem(tx, tenantId, patch.itemName);
    if (item.item_id !== visit.item_id) changes.item_id = item.item_id;
  }
  const assignment = await assignmentChange(tx, tenantId, visit, patch, newSite);
  if (startDate.getTime() !== visit.start_date.getTime()) changes.start_date = startDate;
  if (dueDate.getTime() !== visit.due_date.getTime()) changes.due_date = dueDate;
  Object.assign(changes, changedColumns(visit, suppliedColumns(PLAIN_COLUMNS, patch)));

  if (Object.keys(changes).length === 0 && assignment === undefined)
    return (await repository.findVisit(tx, tenantId, id))!;
  const ticket = changes.client_ticket_number;
  const holder = typeof ticket === 'string' ? await repository.findVisitIdByTicket(tx, tenantId, ticket) : undefined;
  if (holder !== undefined) throw duplicateTicket(tenantId, String(ticket), holder);
  // Only a ticket number this patch sets can be a duplicate (the visit's own was unique already).
  await refusingDuplicate(
    () => repository.updateVisit(tx, tenantId, id, { ...changes, updated_at: at }),
    () => duplicateTicket(tenantId, String(ticket)),
    TICKET_CONSTRAINT,
  );
  if (assignment) {
    await repository.deleteAssignments(tx, tenantId, id, assignment.remove);
    await repository.insertAssignments(tx, tenantId, id, assignment.add, at);
  }
  return (await repository.findVisit(tx, tenantId, id))!;
}

export async function listVisits(
  db: Kysely<Database>,
  cursors: CursorCodec,
  tenantId: string,
  query: SiteVisitListQueryValue,
): Promise<ReadPage<VisitRecord>> {
  return readPage(cursors, SITE_VISIT_TYPE, tenantId, query, (after, limit) =>
    repository.listVisits(db, tenantId, query.clientTicketNumber, after, limit),
  );
}
