/**
 * How a visit comes into being (SPEC: Site visit, Site visits endpoint rules, Site-asset rules):
 * `createVisit` in a transaction, the one way for the operator's API and for a create with site assets,
 * and `visitCreation`, the client API's create in one statement where the references are known.
 */
import type { Transaction } from 'kysely';
import type { Database, SiteVisitRow } from '../../db/schema.js';
import type { Executor } from '../../db/executor.js';
import type { ResourceObject } from '../../http/envelope.js';
import type { ReadFirstCreate } from '../../http/idempotency.js';
import { Problem } from '../../http/problem.js';
import { newId } from '../../lib/ids.js';
import { type EventLog, eventWithRow, type NewEvent, recordEvent } from '../outbox/service.js';
import { activeProject, namedItem, referenceIdText } from '../reference/service.js';
import { resolveSiteAssets } from '../site-assets/service.js';
import { siteWithCode } from '../sites/service.js';
import type { KnownReferences, ReferenceNames } from './known-references.js';
import { findVisitReferences, lockSiteOfCode, visitReferencesGuard } from './references-repository.js';
import { loadNewVisitView, newVisitView, type VisitView } from './representation.js';
import * as repository from './repository.js';
import type { NewVisitRecord } from './repository.js';
import type { SiteVisitCreate } from './schemas.js';
import { INITIAL_STATUS } from './statuses.js';
import { assertDueNotBeforeStart, duplicateTicket, parseDate } from './visit-fields.js';

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
    deliverables_notes: null,
    quality_review_passed: null,
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
  await lockSiteOfCode(tx, tenantId, input.clientSiteId);
  const references = await readReferences(tx, tenantId, input);
  const siteAssetIds = input.siteAssetIds
    ? await resolveSiteAssets(tx, tenantId, references.site, input.siteAssetIds)
    : [];
  const row = newVisitRow(tenantId, input, references, now);
  const ticket = row.client_ticket_number;
  if (ticket !== null && references.ticketTaken) throw duplicateTicket(tenantId, ticket);
  // Two creates racing past the check above: the unique constraint decides.
  if (!(await repository.insertVisit(tx, row))) throw duplicateTicket(tenantId, String(ticket));
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
        duplicate: () => duplicateTicket(tenantId, String(row.client_ticket_number)),
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
