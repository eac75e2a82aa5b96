/**
 * Migration 0015 keeps the operator's review and the last transmitted notes on each visit, for visits that were
 * completed or sent deliverables before it too: a Completed visit passed its review (shown from its status, no
 * row rewritten), and the notes of the last
 * transmission come from its deliverables.transmitted event while that event is kept (WEBHOOK_HISTORY_RETENTION
 * may have purged it: null then). Visits are walked through the operator API, the columns dropped as before the
 * migration, and its statements run again.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { up } from '../../src/db/migrations/0015_visit_outcome.js';
import { ManualClock } from '../../src/lib/clock.js';
import { openEmptyDatabase, startTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../helpers/tenants.js';
import { visitInStatus, visitTenant, workflowAction } from '../helpers/visits.js';

let empty: Awaited<ReturnType<typeof openEmptyDatabase>>;
let t: TestApp | undefined;
beforeAll(async () => {
  empty = await openEmptyDatabase('ss_visit_outcome');
});
afterAll(async () => {
  await t?.close();
  await empty?.drop();
});

it('keeps the notes of the last transmission still in the events; Completed visits show their review passed of the last transmission still in the events', async () => {
  const clock = new ManualClock(new Date('2026-12-01T08:00:00Z'));
  t = await startTestApp({ database: empty.database, clock });
  const v = await visitTenant(t);
  const transmit = async (visitId: string, notes: string | null) => {
    clock.advance(1_000);
    expect((await workflowAction(t!, visitId, { action: 'transmit-deliverables', notes })).status).toBe(200);
  };
  const fresh = await visitInStatus(t, v, 'New');
  const dispatched = await visitInStatus(t, v, 'Dispatched');
  await transmit(dispatched.id, 'First photos.');
  await transmit(dispatched.id, 'Completion report.');
  const completed = await visitInStatus(t, v, 'Completed');
  await transmit(completed.id, 'Sent with notes.');
  await transmit(completed.id, null);
  const purged = await visitInStatus(t, v, 'Completed');
  await transmit(purged.id, 'Notes whose event the retention purged.');
  await t.close();
  t = undefined;

  const { db } = empty.database;
  await sql`delete from webhook_deliveries d using events e
    where d.event_id = e.id and e.resource_id = ${purged.id} and e.type = 'deliverables.transmitted'`.execute(db);
  await sql`delete from events where resource_id = ${purged.id} and type = 'deliverables.transmitted'`.execute(db);
  await sql`alter table site_visits drop column quality_review_passed, drop column deliverables_notes`.execute(db);

  await up(db as never);

  const rows = await sql<{ id: string; quality_review_passed: boolean | null; deliverables_notes: string | null }>`
    select id, quality_review_passed, deliverables_notes from site_visits`.execute(db);
  const byId = new Map(rows.rows.map((row) => [row.id, [row.quality_review_passed, row.deliverables_notes]]));
  expect(byId.get(fresh.id)).toEqual([null, null]);
  expect(byId.get(dispatched.id)).toEqual([null, 'Completion report.']);
  expect(byId.get(completed.id)).toEqual([null, null]);
  expect(byId.get(purged.id)).toEqual([null, null]);

  // Nothing recorded for the visits Completed before it, which the operator's view shows as passed: their status.
  t = await startTestApp({ database: empty.database, clock });
  const review = async (visitId: string) =>
    (await admin(t!, 'GET', `/admin/v1/site-visits/${visitId}`)).body.data.attributes.qualityReviewPassed;
  expect([await review(fresh.id), await review(dispatched.id)]).toEqual([null, null]);
  expect([await review(completed.id), await review(purged.id)]).toEqual([true, true]);
});
