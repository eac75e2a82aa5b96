/**
 * What a visit's create and its update share: the fields stored as given, the dates' checks, and the
 * refusal of a ticket number the tenant already used.
 */
import type { SiteVisitRow } from '../../db/schema.js';
import type { ColumnsOf } from '../../db/column-changes.js';
import { DuplicateResource } from '../../http/duplicate-resource.js';
import { validationProblem } from '../../http/problem.js';
import type { ProblemSlug } from '../../http/problem-types.js';
import { valueOrWhy } from '../../http/request-names.js';
import { SITE_VISIT_TYPE } from './representation.js';
import { findVisitIdByTicket } from './repository.js';
import type { SiteVisitCreate, SiteVisitPatch } from './schemas.js';

/** API field → column, for the fields stored as given. */
export const PLAIN_COLUMNS = {
  description: 'description',
  clientTicketNumber: 'client_ticket_number',
  serviceType: 'service_type',
  jobInstructions: 'job_instructions',
  arePartsRequired: 'are_parts_required',
  trackingNumber: 'tracking_number',
  partsReturnRequired: 'parts_return_required',
  schedulingRule: 'scheduling_rule',
} as const satisfies ColumnsOf<SiteVisitCreate, SiteVisitRow> & ColumnsOf<SiteVisitPatch, SiteVisitRow>;

/** The 409s of a visit's references as a create or a change names them: project, site assets, ticket number. */
export const VISIT_REFERENCE_CONFLICTS: readonly ProblemSlug[] = [
  'invalid-project',
  'invalid-site-asset',
  'duplicate-resource',
];

/** The 409 of a ticket number the tenant has used already: it names that visit, `existingId` or found by the number. */
export function duplicateTicket(tenantId: string, clientTicketNumber: string, existingId?: string): DuplicateResource {
  return new DuplicateResource(
    `A site visit with clientTicketNumber ${valueOrWhy(clientTicketNumber, 'as sent', true)} already exists for your client.`,
    existingId !== undefined
      ? { type: SITE_VISIT_TYPE, id: existingId }
      : async (db) => {
          const id = await findVisitIdByTicket(db, tenantId, clientTicketNumber);
          return id === undefined ? undefined : { type: SITE_VISIT_TYPE, id };
        },
  );
}

export function parseDate(field: 'startDate' | 'dueDate', value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw validationProblem({ [field]: ['must be a valid ISO 8601 date-time with a time zone'] });
  return date;
}

/** dueDate must not be before startDate; the message goes to the field the request supplied. */
export function assertDueNotBeforeStart(
  start: Date,
  due: Date,
  supplied: { startDate?: unknown; dueDate?: unknown },
): void {
  if (due.getTime() >= start.getTime()) return;
  throw validationProblem(
    supplied.dueDate !== undefined
      ? { dueDate: ['must not be before startDate'] }
      : { startDate: ['must not be after dueDate'] },
  );
}
