/**
 * The operator's shared inbox state (migration 0016): POST /admin/v1/messages/handled marks messages of any tenants
 * handled (or not again), all or none; the inbox shows handledAt and filters on handled; GET
 * /admin/v1/messages/unhandled-count counts the clients' unhandled messages, up to its limit. Operator-only: the
 * client's message, its version and its list do not change. Through HTTP, with a manual clock.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up } from '../../src/db/migrations/0016_handled_messages.js';
import { ManualClock } from '../../src/lib/clock.js';
import { UNHANDLED_COUNT_LIMIT } from '../../src/modules/messages/inbox-schemas.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { copyMessage, createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
import { admin } from '../helpers/tenants.js';

const HANDLED = '/admin/v1/messages/handled';
const COUNT = '/admin/v1/messages/unhandled-count';
const clock = new ManualClock(new Date('2026-12-01T08:00:00Z'));

let t: TestApp;
let a: MessageTenant;
let b: MessageTenant;
/** The file's messages in the order they were created: a, b, a, b. */
let ids: string[];

const inbox = async (params: Record<string, string> = {}) => {
  const listed = await admin(t, 'GET', `/admin/v1/messages?${new URLSearchParams(params)}`);
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data as { messageId: string; handledAt: string | null }[];
};
const count = async () => {
  const counted = await admin(t, 'GET', COUNT);
  expect(counted.status, counted.text).toBe(200);
  return counted.body.data;
};

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await messageTenant(t);
  b = await messageTenant(t);
  ids = [];
  for (const tenant of [a, b, a, b]) ids.push((await createMessage(t, tenant)).id);
});
afterAll(async () => t?.close());

describe('handled messages', () => {
  it('starts every new message unhandled: listed with handledAt null, counted', async () => {
    expect((await inbox()).map((message) => message.handledAt)).toEqual([null, null, null, null]);
    expect(await count()).toEqual({ unhandled: 4, more: false });
  });

  it('marks messages of two tenants handled at once, keeps the first time on a repeat, and filters the inbox', async () => {
    const before = await t.http.get(`/api/v1/messages/${ids[0]}`, { token: a.token });
    const marked = await admin(t, 'POST', HANDLED, { messageIds: [ids[0], ids[1]] });
    expect(marked.status, marked.text).toBe(200);
    expect(marked.body).toEqual({ data: { handled: true, changed: 2, stale: [] } });
    const at = clock.now().toISOString();

    clock.advance(60_000);
    const again = await admin(t, 'POST', HANDLED, { messageIds: [ids[1], ids[2]], handled: true });
    expect(again.body).toEqual({ data: { handled: true, changed: 1, stale: [] } });
    const later = clock.now().toISOString();

    const all = await inbox();
    expect(all.map((message) => message.handledAt)).toEqual([at, at, later, null]);
    expect((await inbox({ handled: 'false' })).map((message) => message.messageId)).toEqual([ids[3]]);
    expect((await inbox({ handled: 'true', order: 'desc' })).map((message) => message.messageId)).toEqual([
      ids[2],
      ids[1],
      ids[0],
    ]);
    expect((await inbox({ handled: 'true', tenantId: a.tenantId })).map((m) => m.messageId)).toEqual([ids[0], ids[2]]);
    expect((await inbox({ handled: 'false', tenantId: a.tenantId })).map((m) => m.messageId)).toEqual([]);
    expect(await count()).toEqual({ unhandled: 1, more: false });

    // The client's message is as it was: no field of the operator's, the same version and updatedAt.
    const after = await t.http.get(`/api/v1/messages/${ids[0]}`, { token: a.token });
    expect(after.body).toEqual(before.body);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
  });

  it('marks a message not handled again (back in the count and the filter)', async () => {
    const reopened = await admin(t, 'POST', HANDLED, { messageIds: [ids[0], ids[3]], handled: false });
    expect(reopened.body).toEqual({ data: { handled: false, changed: 1, stale: [] } });
    expect((await inbox({ handled: 'false' })).map((message) => message.messageId)).toEqual([ids[0], ids[3]]);
    expect(await count()).toEqual({ unhandled: 2, more: false });
  });

  it('marks none when an id names no message (422 naming it), and refuses a body out of bounds', async () => {
    const unknown = 'msg_00000000000000000000000000';
    const refused = await admin(t, 'POST', HANDLED, { messageIds: [ids[3], unknown] });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({ messageIds: [`names no message: ${unknown}`] });
    expect((await inbox({ handled: 'false' })).map((message) => message.messageId)).toContain(ids[3]);
    for (const body of [
      {},
      { messageIds: [] },
      { messageIds: [ids[0], ids[0]] },
      { messageIds: Array.from({ length: 101 }, (_, n) => `msg_${n}`) },
      { messageIds: [ids[0]], handled: 'yes' },
      { messageIds: [ids[0]], note: 'x' },
    ]) {
      const response = await admin(t, 'POST', HANDLED, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await admin(t, 'GET', '/admin/v1/messages?handled=yes')).status).toBe(422);
    expect((await admin(t, 'GET', `${COUNT}?handled=false`)).status).toBe(422);
  });

  it('answers the operator token only', async () => {
    const json = { messageIds: [ids[0]] };
    for (const token of [undefined, a.fullToken]) {
      expect((await t.http.request('POST', HANDLED, { ...(token ? { token } : {}), json })).status).toBe(401);
      expect((await t.http.request('GET', COUNT, token ? { token } : {})).status).toBe(401);
    }
  });

  it(`counts up to ${UNHANDLED_COUNT_LIMIT}, then says there are more`, async () => {
    const { unhandled } = await count();
    await copyMessage(t, ids[3]!, 'msg_many_', UNHANDLED_COUNT_LIMIT - unhandled);
    expect(await count()).toEqual({ unhandled: UNHANDLED_COUNT_LIMIT, more: false });
    await copyMessage(t, ids[3]!, 'msg_more_', 1);
    expect(await count()).toEqual({ unhandled: UNHANDLED_COUNT_LIMIT, more: true });
  });
});

describe('migration 0016', () => {
  it('takes the messages already stored as handled at its time, without rewriting them; later ones start unhandled', async () => {
    const { db } = t.database;
    await sql`drop index messages_client_unhandled`.execute(db);
    await sql`alter table messages drop column handled_at`.execute(db);
    const fileNode = async () =>
      (await sql<{ node: string }>`select pg_relation_filenode('messages')::text as node`.execute(db)).rows[0]!.node;
    const node = await fileNode();
    const migrated = new Date();
    await up(db as never);
    // The same file: no row was rewritten.
    expect(await fileNode()).toBe(node);
    // Run again, as after the column and index were made beforehand (docs/deployment.md): nothing changes.
    await up(db as never);
    const handled = await sql<{ unhandled: string }>`
      select count(*) filter (where handled_at is null or handled_at < ${new Date(migrated.getTime() - 60_000)})
        as unhandled from messages`.execute(db);
    expect(Number(handled.rows[0]!.unhandled)).toBe(0);
    expect(await count()).toEqual({ unhandled: 0, more: false });
    const fresh = await createMessage(t, b);
    expect((await inbox({ handled: 'false' })).map((message) => message.messageId)).toEqual([fresh.id]);
  });
});
