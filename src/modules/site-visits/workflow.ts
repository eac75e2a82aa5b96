/**
 * The operator's visit workflow (SPEC: Event types; DECISIONS: Site visits and assets): one action at a
 * time moves a visit New → Scheduled → Dispatched → Completed, assigns its field rep and records
 * deliverables, and records the action's lifecycle event in the same transaction as the change.
 *
 * performWorkflowAction serves two callers: the operator API, which names a visit by id across tenants,
 * and the sandbox simulator, which acts for one tenant (another tenant's visit is not found).
 */
import type { Transaction } from 'kysely';
import { notBefore } from '../../lib/clock.js';
import type { Database, EventRow, SiteVisitRow, SiteVisitUpdate } from '../../db/schema.js';
import { notFound, notFoundById, Problem, validationProblem } from '../../http/problem.js';
import { isBlank, seenAs } from '../../lib/visible-text.js';
import { type EventLog, recordEvent } from '../outbox/service.js';
import type { EventType } from '../outbox/types.js';
import * as repository from './repository.js';
import type { VisitRecord } from './repository.js';
import { AWAITING_REASSIGNMENT, type WorkflowAction, type WorkflowActionName } from './workflow-schemas.js';
import type { VisitStatus } from './statuses.js';

/** A visit by id alone (operator API), or by id within one tenant (sandbox simulator). */
export type WorkflowTarget = string | { tenantId: string; visitId: string };

export interface WorkflowOutcome {
  /** The visit after the action. */
  visit: VisitRecord;
  /** The event the action recorded; undefined when the action changed nothing (and the visit kept its version). */
  event: EventRow | undefined;
}

/** What an action changes and the event that reports it: the event's own data members. */
interface Step {
  changes: SiteVisitUpdate;
  event: { type: EventType; data: Record<string, unknown> };
}

/** The statuses in which each action is allowed. */
const ALLOWED_IN: Record<WorkflowActionName, readonly VisitStatus[]> = {
  'assign-rep': ['New', 'Scheduled', 'Dispatched'],
  schedule: ['New', 'Scheduled'],
  dispatch: ['Scheduled'],
  complete: ['Dispatched'],
  'transmit-deliverables': ['Dispatched', 'Completed'],
};

function assertAllowed(visit: SiteVisitRow, action: WorkflowActionName): void {
  const allowed = ALLOWED_IN[action];
  if (allowed.includes(visit.status as VisitStatus)) return;
  throw new Problem(
    'invalid-state',
    `The visit is ${visit.status}: ${action} is allowed only on a visit that is ${allowed.join(' or ')}.`,
  );
}

/**
 * What the body schema does not say: a rep's name shows something (isBlank: not only white space or
 * characters that render as nothing, such as U+200B, which a receiver would show as an empty name), and is
 * not the text that reports a cleared assignment (receivers could not tell the two apart).
 */
export function assertValid(action: WorkflowAction): void {
  if (action.action !== 'assign-rep' || action.fieldRepName === null) return;
  if (isBlank(action.fieldRepName))
    throw validationProblem({ fieldRepName: ['must not be blank; send null to clear the rep'] });
  if (seenAs(action.fieldRepName) === seenAs(AWAITING_REASSIGNMENT)) {
    throw validationProblem({
      fieldRepName: [
        `must not be "${AWAITING_REASSIGNMENT}", which reports a cleared assignment; send null to clear the rep`,
      ],
    });
  }
}

/** The change an action makes to the locked visit, or undefined when it would change nothing. */
export function plan(visit: SiteVisitRow, action: WorkflowAction, now: Date): Step | undefined {
  assertAllowed(visit, action.action);
  switch (action.action) {
    case 'assign-rep': {
      const name = action.fieldRepName;
      if (name === visit.field_rep_name) return undefined;
      return {
        changes: { field_rep_name: name },
        event: { type: 'rep.assigned', data: { fieldRepName: name ?? AWAITING_REASSIGNMENT } },
      };
    }
    case 'schedule': {
      const schedule = { scheduledDate: action.scheduledDate, etaTime: action.etaTime ?? null };
      const changes: SiteVisitUpdate = { scheduled_date: schedule.scheduledDate, eta_time: schedule.etaTime };
      if (visit.status === 'New')
        return { changes: { ...changes, status: 'Scheduled' }, event: { type: 'job.scheduled', data: schedule } };
      if (visit.scheduled_date === schedule.scheduledDate && visit.eta_time === schedule.etaTime) return undefined;
      return { changes, event: { type: 'schedule.updated', data: schedule } };
    }
    case 'dispatch':
      return { changes: { status: 'Dispatched', dispatched_at: now }, event: { type: 'job.dispatched', data: {} } };
    case 'complete':
      return {
        changes: { status: 'Completed', completed_at: now, quality_review_passed: action.qualityReviewPassed },
        event: { type: 'job.completed', data: {} },
      };
    case 'transmit-deliverables': {
      const notes = action.notes ?? null;
      return {
        changes: { deliverables_transmitted_at: now, deliverables_notes: notes },
        event: { type: 'deliverables.transmitted', data: { notes } },
      };
    }
  }
}

/**
 * Performs one workflow action on the visit, locked for the transaction (concurrent actions on one visit
 * run one after the other, each seeing the previous one's result). A change adds exactly 1 to the version,
 * moves updatedAt and records the action's event, whose data carries clientTicketNumber, clientSiteId,
 * the status after the action and the action's own members. An action that would change nothing (the
 * same rep, the same schedule) records nothing and leaves the visit as it is.
 *
 * Throws 422 for a blank or reserved rep name, 404 not-found for an unknown visit (or one of another
 * tenant), 409 invalid-state for an action the visit's status does not allow.
 */
export async function performWorkflowAction(
  tx: Transaction<Database>,
  target: WorkflowTarget,
  action: WorkflowAction,
  now: Date,
  log?: EventLog,
): Promise<WorkflowOutcome> {
  assertValid(action);
  const visitId = typeof target === 'string' ? target : target.visitId;
  const tenantId = typeof target === 'string' ? await repository.findVisitTenantId(tx, visitId) : target.tenantId;
  const visit = tenantId === undefined ? undefined : await repository.findVisitForUpdate(tx, tenantId, visitId);
  // The client's simulator names the visit in its path, maybe by its own ticket number; the operator's by id.
  if (tenantId === undefined || visit === undefined)
    throw typeof target === 'string' ? notFound('Site visit') : notFoundById('Site visit', visitId);

  const at = notBefore(now, visit.updated_at);
  const step = plan(visit, action, at);
  if (step !== undefined) await repository.updateVisit(tx, tenantId, visitId, { ...step.changes, updated_at: at });
  const record = (await repository.findVisit(tx, tenantId, visitId))!;
  if (step === undefined) return { visit: record, event: undefined };

  const event = await recordEvent(
    tx,
    tenantId,
    {
      type: step.event.type,
      occurredAt: at,
      resourceId: visitId,
      data: {
        clientTicketNumber: record.client_ticket_number,
        clientSiteId: record.site_code,
        status: record.status,
        ...step.event.data,
      },
    },
    log,
  );
  return { visit: record, event };
}
