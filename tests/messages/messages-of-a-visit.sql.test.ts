/**
 * One visit's messages (`GET /api/v1/messages?siteVisitId=`, messages/repository.ts `listMessages`) are read
 * through the index of migration 0013 in the list's order: a page of a visit of many messages reads its rows,
 * not all of the visit's to sort them.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { copyMessage, createMessage, messageTenant } from '../helpers/messages.js';
import { createVisit } from '../helpers/visits.js';

const MESSAGES = 5_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

it("reads a page of a visit's messages by index, in order, however many the tenant and the visit have", async () => {
  const m = await messageTenant(t);
  // The tenant's other visit, with many messages before the visit's: the tenant's list would read through them.
  const other = await createVisit(t, m);
  await copyMessage(t, (await createMessage(t, { ...m, visitId: other.id })).id, 'msg_other_', MESSAGES);
  const first = await createMessage(t, m);
  await copyMessage(t, first.id, 'msg_copy_', MESSAGES);
  await sql`analyze messages`.execute(t.database.db);

  // The shape of the list's statement: the tenant's, one visit's, after a position, in order, a page and one.
  const page = sql`select id, version, seq from messages
    where tenant_id = ${m.tenantId} and site_visit_id = ${m.visitId} and seq > ${0} order by seq limit 26`;
  const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) ${page}`.execute(t.database.db);
  const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
  expect([...plan.matchAll(/"Index Name":"([^"]+)"/g)].map((match) => match[1])).toEqual(['messages_tenant_visit_seq']);
  expect(plan).not.toContain('"Node Type":"Sort"');

  const listed = await t.http.get('/api/v1/messages', {
    token: m.token,
    query: { siteVisitId: m.visitId, 'page[size]': 100 },
  });
  expect(listed.body.data).toHaveLength(100);
  expect(listed.body.data[0].id).toBe(first.id);
});
