/**
 * Site-visit rules (SPEC: Site visit, Site visits endpoint rules, Site-asset rules): creation (with its
 * ticket.created event), partial update, lookups and listing. createVisit is the one way a visit comes
 * into being, whether through the client API or the operator's.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, SiteRow, SiteVisitRow, SiteVisitUpdate } from '../../db/schema.js';
import { changedColumns, type ColumnsOf, suppliedColumns } from '../../db/column-changes.js';
import { refusingDuplicate } from '../../db/errors.js';
import type { Executor } from '../../db/executor.js';
import type { ResourceObject } from '../../http/envelope.js';
import type { ReadFirstCreate } from '../../http/idempotency.js';
import { assertIfMatch } from '../../http/concurrency.js';
import { type CursorCodec, type Page, readPage } from '../../http/pagination.js';
import { notFound, Problem, validationProblem } from '../../http/problem.js';
import { newId } from '../../lib/ids.js';
import { type EventLog, eventWithRow, type NewEvent, recordEvent } from '../outbox/service.js';
import { activeProject, namedItem, referenceIdText, resolveItem, resolveProject } from '../reference/service.js';
import { resolveSiteAssets } from '../site-assets/service.js';
import { getSite, getSiteByCode, siteWithCode } from '../sites/service.js';
import { loadNewVisitView, newVisitView, SITE_VISIT_TYPE, type VisitView } from './representation.js';
import * as repository from './repository.js';
import { findVisitReferences, visitReferencesGuard } from './references-repository.js';
import { type NewVisitRecord, TICKET_CONSTRAINT, type VisitRecord } from './repository.js';
import type { SiteVisitCreate, SiteVisitListQueryValue, SiteVisitPatch } from './schemas.js';
import { INITIAL_STATUS } from './statuses.js';
import type { KnownReferences, ReferenceNames } from './known-references.js';

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

/** What a new visit's row takes from the visit's references, read together and checked in the documented order. */
interface NewVisitReferences {
  startDate: Date;
  dueDate: Date;
  project: { project_id: string; project_id_is_integer: boolean };
  site: { id: string; site_code: string };
  item: { item_id: string; item_name: string };
  ticketTaken: boolean;
}

/** The visit's dates, checked (422). */
function visitDates(input: SiteVisitCreate): { startDate: Date; dueDate: Date } {
  const startDate = parseDate('startDate', input.startDate);
  const dueDate = parseDate('dueDate', input.dueDate);
  assertDueNotBeforeStart(startDate, dueDate, input);
  return { startDate, dueDate };
}

/** How the visit names its references. */
function referenceNames(input: SiteVisitCreate): ReferenceNames {
  return { projectId: referenceIdText(input.projectId), siteCode: input.clientSiteId, itemName: input.itemName };
}

/**
 * The dates, then the references: project first (409), then site (404) and item (404). Whether the ticket
 * number is taken is read with them; the caller checks it after the site assets (409).
 */
async function readReferences(db: Executor, tenantId: string, input: SiteVisitCreate): Promise<NewVisitReferences> {
  const dates = visitDates(input);
  const named = await findVisitReferences(db, tenantId, {
    ...referenceNames(input),
    clientTicketNumber: input.clientTicketNumber ?? null,
  });
  return {
    ...dates,
    project: activeProject(input.projectId, named.project),
    site: siteWithCode(input.clientSiteId, named.site),
    item: namedItem(input.itemName, named.item),
    ticketTaken: named.ticketTaken,
  };
}

/**
 * The references as an earlier create of this process found them (`KnownReferences`; the ticket number
 * unread: the insert's unique constraint decides), else read and remembered.
 */
async function knownOrReadReferences(
  db: Executor,
  known: KnownReferences,
  tenantId: string,
  input: SiteVisitCreate,
): Promise<NewVisitReferences> {
  const names = referenceNames(input);
  const remembered = known.get(tenantId, names);
  if (remembered) return { ...visitDates(input), ...remembered, ticketTaken: false };
  const references = await readReferences(db, tenantId, input);
  known.remember(tenantId, names, references);
  return references;
}

/** The new visit's row, every column set (status New, version 1, no workflow state yet). */
function newVisitRow(
  tenantId: string,
  input: SiteVisitCreate,
  references: NewVisitReferences,
  now: Date,
): Omit<SiteVisitRow, 'seq'> {
  return {
    id: newId('visit'),
    tenant_id: tenantId,
    site_id: references.site.id,
    client_ticket_number: input.clientTicketNumber ?? null,
    description: input.description,
    service_type: input.serviceType,
    job_instructions: input.jobInstructions,
    project_id: references.project.project_id,
    item_id: references.item.item_id,
    start_date: references.startDate,
    due_date: references.dueDate,
    are_parts_required: input.arePartsRequired,
    tracking_number: input.trackingNumber ?? null,
    parts_return_required: input.partsReturnRequired ?? null,
    scheduling_rule: input.schedulingRule,
    status: INITIAL_STATUS,
    version: 1,
    created_at: now,
    updated_at: now,
    field_rep_name: null,
    scheduled_date: null,
    eta_time: null,
    dispatched_at: null,
    completed_at: null,
    deliverables_transmitted_at: null,
  };
}

/** The record a new visit is served from: its row, and what a read would join in from its references. */
function newVisitRecord(row: Omit<SiteVisitRow, 'seq'>, references: NewVisitReferences): NewVisitRecord {
  return {
    ...row,
    site_code: references.site.site_code,
    project_id_is_integer: references.project.project_id_is_integer,
    item_name: references.item.item_name,
  };
}

/** ticket.created, as a new visit records it. */
function ticketCreated(row: Omit<SiteVisitRow, 'seq'>, references: NewVisitReferences): NewEvent {
  return {
    type: 'ticket.created',
    occurredAt: row.created_at,
    resourceId: row.id,
    data: { clientTicketNumber: row.client_ticket_number, clientSiteId: references.site.site_code, status: row.status },
  };
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
): Promise<NewVisitRecord> {
  const references = await readReferences(tx, tenantId, input);
  const siteAssetIds = input.siteAssetIds
    ? await resolveSiteAssets(tx, tenantId, references.site, input.siteAssetIds)
    : [];
  const row = newVisitRow(tenantId, input, references, now);
  const ticket = row.client_ticket_number;
  if (ticket !== null && references.ticketTaken) throw duplicateTicket(ticket);
  // Two creates racing past the check above: the unique constraint decides.
  if (!(await repository.insertVisit(tx, row))) throw duplicateTicket(String(ticket));
  await repository.insertAssignments(tx, tenantId, row.id, siteAssetIds, now);
  await recordEvent(tx, tenantId, ticketCreated(row, references), log);
  return newVisitRecord(row, references);
}

/** How a create's answer shows the new visit: with its assets or not, as the caller may read them. */
export interface NewVisitServing {
  includeAssets: boolean;
  resource: (view: VisitView) => ResourceObject<unknown>;
}

/**
 * The client API's create of a visit without site assets, as one statement (`ReadFirstCreate`): the
 * references are those an earlier create found (`known`), or read first; the visit, its ticket.created
 * event and the event's deliveries are then inserted in the statement that also holds the Idempotency-Key
 * and checks that the references still hold (`visitReferencesGuard`). Anything the read refuses, a visit
 * whose references changed, and a visit with site assets (rows of their own) is created by `createVisit`
 * in the create's transaction instead.
 */
export function visitCreation(
  known: KnownReferences,
  tenantId: string,
  input: SiteVisitCreate,
  now: Date,
  serving: NewVisitServing,
  log?: EventLog,
): ReadFirstCreate {
  const assigned = input.siteAssetIds !== undefined && input.siteAssetIds.length > 0;
  return {
    prepare: async (db) => {
      if (assigned) return undefined;
      const references = await knownOrReadReferences(db, known, tenantId, input).catch((error: unknown) => {
        if (error instanceof Problem) return undefined;
        throw error;
      });
      // A taken ticket number (only a given one can be) is refused by the transactional path.
      if (references === undefined || references.ticketTaken) return undefined;
      const row = newVisitRow(tenantId, input, references, now);
      const event = eventWithRow(db, tenantId, ticketCreated(row, references), log);
      return {
        insert: repository.visitInsert(row, event.companions, visitReferencesGuard(tenantId, references)),
        duplicate: () => duplicateTicket(String(row.client_ticket_number)),
        resource: serving.resource(newVisitView(newVisitRecord(row, references), serving.includeAssets)),
        afterCreate: event.afterCreate,
        settled: event.settled,
      };
    },
    inTransaction: async (tx) => {
      // Read afresh by the next create too: these may be what changed.
      known.forget(tenantId, referenceNames(input));
      const record = await createVisit(tx, tenantId, input, now, log);
      return serving.resource(await loadNewVisitView(tx, tenantId, record, serving.includeAssets, assigned));
    },
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

/** The tenant's visit (404 otherwise); outside a transaction the read joins the turn's batch (`readVisit`). */
export async function getVisit(db: Kysely<Database>, tenantId: string, id: string): Promise<VisitRecord> {
  const visit = await repository.readVisit(db, tenantId, id);
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
