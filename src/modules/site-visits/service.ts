/**
 * Site-visit rules (SPEC: Site visit, Site visits endpoint rules, Site-asset rules): creation (with its
 * ticket.created event), partial update, lookups and listing. createVisit is the one way a visit comes
 * into being, whether through the client API or the operator's.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, SiteRow, SiteVisitRow, SiteVisitUpdate } from '../../db/schema.js';
import { changedColumns, type ColumnsOf, suppliedColumns } from '../../db/column-changes.js';
import { refusingDuplicate } from '../../db/errors.js';
import { assertIfMatch } from '../../http/concurrency.js';
import { type CursorCodec, type Page, readPage } from '../../http/pagination.js';
import { notFound, Problem, validationProblem } from '../../http/problem.js';
import { newId } from '../../lib/ids.js';
import { type EventLog, recordEvent } from '../outbox/service.js';
import { activeProject, namedItem, referenceIdText, resolveItem, resolveProject } from '../reference/service.js';
import { resolveSiteAssets } from '../site-assets/service.js';
import { getSite, getSiteByCode, siteWithCode } from '../sites/service.js';
import { SITE_VISIT_TYPE } from './representation.js';
import * as repository from './repository.js';
import type { VisitRecord } from './repository.js';
import type { SiteVisitCreate, SiteVisitListQueryValue, SiteVisitPatch } from './schemas.js';
import { INITIAL_STATUS } from './statuses.js';

const TICKET_CONSTRAINT = 'site_visits_tenant_ticket';

/** API field → column, for the fields stored as given. */
const PLAIN_COLUMNS = {
  description: 'description',
  clientTicketNumber: 'client_ticket_number',
  serviceType: 'service_type',
  jobInstructions: 'job_instructions',
  arePartsRequired: 'are_parts_required',
  trackingNumber: 'tracking_number',
  partsReturnRequired: 'parts_return_required',
  schedulingRule: 'scheduling_rule',
} as const satisfies ColumnsOf<SiteVisitCreate, SiteVisitRow> & ColumnsOf<SiteVisitPatch, SiteVisitRow>;

function duplicateTicket(clientTicketNumber: string): Problem {
  return new Problem(
    'duplicate-resource',
    `A site visit with clientTicketNumber ${JSON.stringify(clientTicketNumber)} already exists for your client.`,
  );
}

function parseDate(field: 'startDate' | 'dueDate', value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw validationProblem({ [field]: ['must be a valid ISO 8601 date-time with a time zone'] });
  return date;
}

/** dueDate must not be before startDate; the message goes to the field the request supplied. */
function assertDueNotBeforeStart(start: Date, due: Date, supplied: { startDate?: unknown; dueDate?: unknown }): void {
  if (due.getTime() >= start.getTime()) return;
  throw validationProblem(
    supplied.dueDate !== undefined
      ? { dueDate: ['must not be before startDate'] }
      : { startDate: ['must not be after dueDate'] },
  );
}

/**
 * Creates a visit (status New) with its asset assignments, and records ticket.created in the same
 * transaction. References are checked project first (409), then site (404), item (404) and site
 * assets (409); then the ticket number's uniqueness (409).
 */
export async function createVisit(
  tx: Transaction<Database>,
  tenantId: string,
  input: SiteVisitCreate,
  now: Date,
  log?: EventLog,
): Promise<VisitRecord> {
  const startDate = parseDate('startDate', input.startDate);
  const dueDate = parseDate('dueDate', input.dueDate);
  assertDueNotBeforeStart(startDate, dueDate, input);
  const clientTicketNumber = input.clientTicketNumber ?? null;
  const named = await repository.findVisitReferences(tx, tenantId, {
    projectId: referenceIdText(input.projectId),
    siteCode: input.clientSiteId,
    itemName: input.itemName,
    clientTicketNumber,
  });
  // Read together, checked in the documented order.
  const project = activeProject(input.projectId, named.project);
  const site = siteWithCode(input.clientSiteId, named.site);
  const item = namedItem(input.itemName, named.item);
  const siteAssetIds = input.siteAssetIds ? await resolveSiteAssets(tx, tenantId, site, input.siteAssetIds) : [];
  if (clientTicketNumber !== null && named.ticketTaken) throw duplicateTicket(clientTicketNumber);

  const id = newId('visit');
  // Two creates racing past the check above: the unique index decides.
  const row = await refusingDuplicate(
    () =>
      repository.insertVisit(tx, {
        id,
        tenant_id: tenantId,
        site_id: site.id,
        client_ticket_number: clientTicketNumber,
        description: input.description,
        service_type: input.serviceType,
        job_instructions: input.jobInstructions,
        project_id: project.project_id,
        item_id: item.item_id,
        start_date: startDate,
        due_date: dueDate,
        are_parts_required: input.arePartsRequired,
        tracking_number: input.trackingNumber ?? null,
        parts_return_required: input.partsReturnRequired ?? null,
        scheduling_rule: input.schedulingRule,
        status: INITIAL_STATUS,
        created_at: now,
        updated_at: now,
      }),
    // A null ticket number is outside the index: only a given one can be a duplicate.
    () => duplicateTicket(String(clientTicketNumber)),
    TICKET_CONSTRAINT,
  );
  await repository.insertAssignments(tx, tenantId, id, siteAssetIds, now);
  await recordEvent(
    tx,
    tenantId,
    {
      type: 'ticket.created',
      occurredAt: now,
      resourceId: id,
      data: { clientTicketNumber, clientSiteId: site.site_code, status: INITIAL_STATUS },
    },
    log,
  );
  // What a re-read joined in, taken from the rows the references were resolved to in this transaction.
  return {
    ...row,
    site_code: site.site_code,
    project_id_is_integer: project.project_id_is_integer,
    item_name: item.item_name,
  };
}

/** Whether the visit is the tenant's (a message names its visit). */
export function visitExists(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  return repository.visitExists(db, tenantId, id);
}

export async function getVisit(db: Kysely<Database>, tenantId: string, id: string): Promise<VisitRecord> {
  const visit = await repository.findVisit(db, tenantId, id);
  if (!visit) throw notFound('Site visit');
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
      `The visit still has site assets of its current site assigned (${current.join(', ')}). Send siteAssetIds of site ${JSON.stringify(newSite.site_code)} (or []) in the same request to move it.`,
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
  if (!visit) throw notFound('Site visit');
  assertIfMatch(ifMatch, visit.version);

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
  if (typeof ticket === 'string' && (await repository.findVisitIdByTicket(tx, tenantId, ticket)))
    throw duplicateTicket(ticket);
  // Only a ticket number this patch sets can be a duplicate (the visit's own was unique already).
  await refusingDuplicate(
    () => repository.updateVisit(tx, tenantId, id, { ...changes, updated_at: now }),
    () => duplicateTicket(String(ticket)),
    TICKET_CONSTRAINT,
  );
  if (assignment) {
    await repository.deleteAssignments(tx, tenantId, id, assignment.remove);
    await repository.insertAssignments(tx, tenantId, id, assignment.add, now);
  }
  return (await repository.findVisit(tx, tenantId, id))!;
}

export async function listVisits(
  db: Kysely<Database>,
  cursors: CursorCodec,
  tenantId: string,
  query: SiteVisitListQueryValue,
): Promise<Page<VisitRecord> & { pageSize: number }> {
  return readPage(cursors, SITE_VISIT_TYPE, tenantId, query, (after, limit) =>
    repository.listVisits(db, tenantId, query.clientTicketNumber, after, limit),
  );
}
