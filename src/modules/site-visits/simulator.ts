/**
 * The sandbox lifecycle simulator: an integrator moves one of its own visits through the operator's
 * workflow to test a webhook receiver end to end, without the operator. Every step is the operator's
 * own code (performWorkflowAction) acting within the tenant, so the events are the real ones, signed and
 * delivered like any other.
 */
import type { Transaction } from 'kysely';
import type { Database, EventRow } from '../../db/schema.js';
import { Problem } from '../../http/problem.js';
import type { VisitRecord } from './repository.js';
import * as repository from './repository.js';
import type { SimulatedAction, WorkflowAction } from './workflow-schemas.js';
import type { EventLog } from '../outbox/service.js';
import { performWorkflowAction } from './workflow.js';

export const SIMULATED_REP = 'Sandbox Rep';

const DAY_MS = 86_400_000;
const calendarDate = (at: Date) => at.toISOString().slice(0, 10);

/** The steps of complete-lifecycle, dated from `now`: scheduled tomorrow, then moved to the day after. */
export function lifecycleSteps(now: Date): WorkflowAction[] {
  return [
    { action: 'assign-rep', fieldRepName: SIMULATED_REP },
    { action: 'schedule', scheduledDate: calendarDate(new Date(now.getTime() + DAY_MS)), etaTime: '09:00' },
    { action: 'schedule', scheduledDate: calendarDate(new Date(now.getTime() + 2 * DAY_MS)), etaTime: '13:30' },
    { action: 'dispatch' },
    { action: 'complete', qualityReviewPassed: true },
    { action: 'transmit-deliverables', notes: 'Simulated deliverables (sandbox).' },
  ];
}

export interface SimulationOutcome {
  visit: VisitRecord;
  events: EventRow[];
}

/**
 * Performs one workflow action, or the whole lifecycle, on the tenant's visit in the caller's transaction.
 * complete-lifecycle starts only from New (so that it emits every lifecycle event once); it is 409
 * invalid-state otherwise, and 404 for a visit of another tenant, like a single action.
 */
export async function simulate(
  tx: Transaction<Database>,
  tenantId: string,
  visitId: string,
  action: SimulatedAction,
  now: Date,
  log?: EventLog,
): Promise<SimulationOutcome> {
  const target = { tenantId, visitId };
  if (action.action !== 'complete-lifecycle') {
    const { visit, event } = await performWorkflowAction(tx, target, action, now, log);
    return { visit, events: event ? [event] : [] };
  }
  const current = await repository.findVisitForUpdate(tx, tenantId, visitId);
  if (current && current.status !== 'New') {
    throw new Problem(
      'invalid-state',
      `The visit is ${current.status}: complete-lifecycle starts from a New visit. Send single actions to move it on from here.`,
    );
  }
  const events: EventRow[] = [];
  let visit: VisitRecord | undefined;
  for (const step of lifecycleSteps(now)) {
    const outcome = await performWorkflowAction(tx, target, step, now, log);
    visit = outcome.visit;
    if (outcome.event) events.push(outcome.event);
  }
  return { visit: visit!, events };
}
