/**
 * The visit workflow's state table (SPEC: Event types; DECISIONS: Site visits and assets), planned without a
 * database: which action each status allows, the status after it, the event it records, and the actions that
 * change nothing (and so record nothing).
 */
import { describe, expect, it } from 'vitest';
import type { SiteVisitRow } from '../../../src/db/schema.js';
import { Problem } from '../../../src/http/problem.js';
import type { WorkflowAction } from '../../../src/modules/site-visits/workflow-schemas.js';
import { VISIT_STATUSES, type VisitStatus } from '../../../src/modules/site-visits/statuses.js';
import { assertValid, plan } from '../../../src/modules/site-visits/workflow.js';

const NOW = new Date('2026-03-01T10:00:00Z');

/** A visit as the workflow reads it: only the columns it looks at matter. */
function visit(status: VisitStatus, columns: Partial<SiteVisitRow> = {}): SiteVisitRow {
  return { status, field_rep_name: null, scheduled_date: null, eta_time: null, ...columns } as SiteVisitRow;
}

const ACTIONS: Record<string, WorkflowAction> = {
  'assign-rep': { action: 'assign-rep', fieldRepName: 'Dana' },
  schedule: { action: 'schedule', scheduledDate: '2026-03-05', etaTime: '09:30' },
  dispatch: { action: 'dispatch' },
  complete: { action: 'complete', qualityReviewPassed: true },
  'transmit-deliverables': { action: 'transmit-deliverables', notes: 'all done' },
};

/** status → action → [status after, event type], or 409 where the status does not allow the action. */
const TABLE: Record<VisitStatus, Record<string, [VisitStatus, string] | 409>> = {
  New: {
    'assign-rep': ['New', 'rep.assigned'],
    schedule: ['Scheduled', 'job.scheduled'],
    dispatch: 409,
    complete: 409,
    'transmit-deliverables': 409,
  },
  Scheduled: {
    'assign-rep': ['Scheduled', 'rep.assigned'],
    schedule: ['Scheduled', 'schedule.updated'],
    dispatch: ['Dispatched', 'job.dispatched'],
    complete: 409,
    'transmit-deliverables': 409,
  },
  Dispatched: {
    'assign-rep': ['Dispatched', 'rep.assigned'],
    schedule: 409,
    dispatch: 409,
    complete: ['Completed', 'job.completed'],
    'transmit-deliverables': ['Dispatched', 'deliverables.transmitted'],
  },
  Completed: {
    'assign-rep': 409,
    schedule: 409,
    dispatch: 409,
    complete: 409,
    'transmit-deliverables': ['Completed', 'deliverables.transmitted'],
  },
};

const cases = VISIT_STATUSES.flatMap((status) =>
  Object.entries(TABLE[status]).map(([action, outcome]) => [status, action, outcome] as const),
);

describe('workflow state table', () => {
  it.each(cases)('%s + %s → %j', (status, action, outcome) => {
    const planned = () => plan(visit(status), ACTIONS[action]!, NOW);
    if (outcome === 409) {
      expect(planned).toThrow(Problem);
      try {
        planned();
      } catch (error) {
        expect(error).toMatchObject({ slug: 'invalid-state', status: 409 });
        expect((error as Problem).detail).toContain(`The visit is ${status}: ${action} is allowed only`);
      }
      return;
    }
    const step = planned();
    expect(step?.event.type).toBe(outcome[1]);
    expect(step?.changes.status ?? status).toBe(outcome[0]);
  });

  it('covers every status and action', () => {
    expect(Object.keys(TABLE)).toEqual([...VISIT_STATUSES]);
    for (const status of VISIT_STATUSES) expect(Object.keys(TABLE[status]).sort()).toEqual(Object.keys(ACTIONS).sort());
  });

  it('stamps dispatch, completion and transmission with now, keeping the review and the notes on the visit', () => {
    expect(plan(visit('Scheduled'), ACTIONS.dispatch!, NOW)?.changes).toEqual({
      status: 'Dispatched',
      dispatched_at: NOW,
    });
    expect(plan(visit('Dispatched'), ACTIONS.complete!, NOW)?.changes).toEqual({
      status: 'Completed',
      completed_at: NOW,
      quality_review_passed: true,
    });
    const transmitted = plan(visit('Completed'), ACTIONS['transmit-deliverables']!, NOW);
    expect(transmitted?.changes).toEqual({ deliverables_transmitted_at: NOW, deliverables_notes: 'all done' });
    expect(transmitted?.event.data).toEqual({ notes: 'all done' });
    // Without notes, the last transmission has none: the visit keeps no earlier one's.
    const bare = plan(visit('Completed', { deliverables_notes: 'earlier' }), { action: 'transmit-deliverables' }, NOW);
    expect(bare?.changes.deliverables_notes).toBeNull();
  });

  it('plans nothing for the same rep or the same schedule (no event, no new version)', () => {
    expect(plan(visit('New', { field_rep_name: 'Dana' }), ACTIONS['assign-rep']!, NOW)).toBeUndefined();
    const scheduled = visit('Scheduled', { scheduled_date: '2026-03-05', eta_time: '09:30' });
    expect(plan(scheduled, ACTIONS.schedule!, NOW)).toBeUndefined();
    expect(plan(scheduled, { action: 'schedule', scheduledDate: '2026-03-05' }, NOW)?.event).toEqual({
      type: 'schedule.updated',
      data: { scheduledDate: '2026-03-05', etaTime: null },
    });
  });

  it('reports a cleared rep as "Awaiting reassignment", and refuses that name or a blank one', () => {
    const cleared = plan(
      visit('Scheduled', { field_rep_name: 'Dana' }),
      { action: 'assign-rep', fieldRepName: null },
      NOW,
    );
    expect(cleared).toEqual({
      changes: { field_rep_name: null },
      event: { type: 'rep.assigned', data: { fieldRepName: 'Awaiting reassignment' } },
    });
    for (const fieldRepName of ['   ', 'awaiting REASSIGNMENT']) {
      expect(() => assertValid({ action: 'assign-rep', fieldRepName })).toThrow(
        expect.objectContaining({ status: 422, errors: { fieldRepName: [expect.any(String)] } }),
      );
    }
    expect(() => assertValid({ action: 'assign-rep', fieldRepName: null })).not.toThrow();
  });
});
