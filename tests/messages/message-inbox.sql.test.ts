/**
 * The operator's inbox (`GET /admin/v1/messages`, messages/repository.ts `inboxStatement`) reads a page by index
 * in arrival order, from either end and after a cursor: across tenants through messages_client_arrival (migration
 * 0014), one tenant's through messages_tenant_seq; never every message read and sorted. And the new index is not
 * a way for the client's list of a tenant's messages: with a plain index on `seq`, the planner walked every
 * tenant's messages to find one tenant's (here, where the tenants' messages are in runs of their own). The
 * unhandled messages (`handled=false`, and their count) are read through messages_client_unhandled (migration
 * 0016), the backlog only: here most messages handled, a few of each tenant's not. One tenant's count is read
 * through messages_tenant_client_unhandled (migration 0017), beside another tenant's large backlog it does not walk.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREVIEW_LENGTH } from '../../src/modules/messages/inbox-schemas.js';
import {
  countUnhandled,
  countUnhandledStatement,
  type InboxFilter,
  type InboxPage,
  inboxStatement,
} from '../../src/modules/messages/repository.js';
import { FILE_ATTACHMENT_OWNER } from '../../src/modules/messages/service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { copyMessage, createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';

const MESSAGES = 5_000;

let t: TestApp;
let a: MessageTenant;
let b: MessageTenant;
beforeAll(async () => {
  t = await startTestApp();
  a = await messageTenant(t);
  b = await messageTenant(t);
  // Each tenant's messages in a run of their own: the newest of one tenant are far from the newest of all.
  await copyMessage(t, (await createMessage(t, a)).id, 'msg_a_', MESSAGES);
  await copyMessage(t, (await createMessage(t, b)).id, 'msg_b_', MESSAGES);
  // The operator handled all but every 500th copy (…500, …000): a backlog of 20.
  await sql`update messages set handled_at = now() where id !~ '^msg_[ab]_[0-9]*(500|000)$'`.execute(t.database.db);
  await sql`analyze`.execute(t.database.db);
});
afterAll(async () => t?.close());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

interface Explained {
  'QUERY PLAN': [{ Plan: PlanNode }];
}

/** How the plan reads the messages: the index of each read (undefined: not through an index), and any sort. */
function messageReads(explained: Explained) {
  const all = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(all)];
  const plan = all(explained['QUERY PLAN'][0].Plan);
  return {
    indexes: plan.filter((node) => node['Relation Name'] === 'messages').map((node) => node['Index Name']),
    sorted: plan.some((node) => node['Node Type'].includes('Sort')),
  };
}

async function inboxPlan(filter: InboxFilter, page: InboxPage) {
  const summary = { previewLength: PREVIEW_LENGTH, attachmentOwnerType: FILE_ATTACHMENT_OWNER };
  const [explained] = await inboxStatement(t.database.db, filter, page, summary).explain<Explained>('json');
  return messageReads(explained!);
}

async function seqOf(id: string): Promise<number> {
  const { rows } = await sql<{ seq: string }>`select seq from messages where id = ${id}`.execute(t.database.db);
  return Number(rows[0]!.seq);
}

describe('the inbox statement', () => {
  it("reads every tenant's page through messages_client_arrival, from either end and after a cursor", async () => {
    const middle = await seqOf(`msg_a_${MESSAGES / 2}`);
    for (const page of [
      { limit: 51, order: 'asc' },
      { limit: 51, order: 'desc' },
      { limit: 51, order: 'asc', afterSeq: middle },
      { limit: 51, order: 'desc', afterSeq: middle },
    ] as const)
      expect(await inboxPlan({}, page), JSON.stringify(page)).toEqual({
        indexes: ['messages_client_arrival'],
        sorted: false,
      });
  });

  it("reads one tenant's page through messages_tenant_seq, however far its messages are from the newest", async () => {
    for (const [tenant, page] of [
      [a, { limit: 51, order: 'desc' }],
      [a, { limit: 51, order: 'asc', afterSeq: await seqOf('msg_a_10') }],
      [b, { limit: 51, order: 'asc' }],
    ] as const)
      expect(await inboxPlan({ tenantId: tenant.tenantId }, page), JSON.stringify(page)).toEqual({
        indexes: ['messages_tenant_seq'],
        sorted: false,
      });
  });

  it('reads the unhandled page through messages_client_unhandled, of every tenant or of one', async () => {
    for (const [filter, page] of [
      [{ handled: false }, { limit: 51, order: 'desc' }],
      [{ handled: false }, { limit: 51, order: 'asc', afterSeq: await seqOf('msg_a_500') }],
      [
        { handled: false, tenantId: a.tenantId },
        { limit: 51, order: 'desc' },
      ],
    ] as const)
      expect(await inboxPlan(filter, page), JSON.stringify(filter)).toEqual({
        indexes: ['messages_client_unhandled'],
        sorted: false,
      });
    const listed = await t.http.get('/admin/v1/messages', {
      token: t.adminToken,
      query: { handled: 'false', tenantId: b.tenantId, order: 'desc', limit: 2 },
    });
    expect(listed.body.data.map((message: any) => message.messageId)).toEqual(['msg_b_5000', 'msg_b_4500']);
  });

  it('counts the unhandled through messages_client_unhandled, stopping at the limit', async () => {
    const [explained] = await countUnhandledStatement(t.database.db, {}, 1000).explain<Explained>('json');
    expect(messageReads(explained!)).toEqual({ indexes: ['messages_client_unhandled'], sorted: false });
    expect(await countUnhandled(t.database.db, {}, 10)).toBe(11);
    expect(await countUnhandled(t.database.db, {}, 1000)).toBe(2 * (MESSAGES / 500));
  });

  it("leaves the client's list of its messages on messages_tenant_seq", async () => {
    // The shape of the client list's statement (messages/repository.ts listMessages): the tenant's, in order.
    const page = sql`select id, version, seq from messages where tenant_id = ${a.tenantId} order by seq limit 26`;
    const { rows } = await sql<Explained>`explain (format json) ${page}`.execute(t.database.db);
    expect(messageReads(rows[0]!)).toEqual({ indexes: ['messages_tenant_seq'], sorted: false });
  });

  it('answers the route the same rows', async () => {
    const listed = await t.http.get('/admin/v1/messages', {
      token: t.adminToken,
      query: { tenantId: a.tenantId, order: 'desc', limit: 3 },
    });
    expect(listed.status, listed.text).toBe(200);
    const newest = [MESSAGES, MESSAGES - 1, MESSAGES - 2].map((n) => `msg_a_${n}`);
    expect(listed.body.data.map((message: any) => message.messageId)).toEqual(newest);
    const all = await t.http.get('/admin/v1/messages', { token: t.adminToken, query: { order: 'desc', limit: 1 } });
    expect(all.body.data.map((message: any) => message.messageId)).toEqual([`msg_b_${MESSAGES}`]);
  });
});

describe("one tenant's count beside another tenant's backlog", () => {
  const FLOOD = 5_000;
  let c: MessageTenant;
  beforeAll(async () => {
    // A third tenant's many messages, none handled: the backlog is mostly not a's or b's. Vacuumed as well as
    // analyzed, as autovacuum keeps a live table: its visibility map is what makes an index-only walk cheap.
    c = await messageTenant(t);
    await copyMessage(t, (await createMessage(t, c)).id, 'msg_c_', FLOOD);
    await sql`vacuum analyze messages`.execute(t.database.db);
  });

  it("counts one tenant's through messages_tenant_client_unhandled, not walking the others' backlog", async () => {
    for (const [tenant, unhandled] of [
      [a, MESSAGES / 500],
      [b, MESSAGES / 500],
      [c, FLOOD + 1],
    ] as const) {
      const filter = { tenantId: tenant.tenantId };
      const [explained] = await countUnhandledStatement(t.database.db, filter, 1000).explain<Explained>('json');
      expect(messageReads(explained!)).toEqual({ indexes: ['messages_tenant_client_unhandled'], sorted: false });
      expect(await countUnhandled(t.database.db, filter, 10_000)).toBe(unhandled);
      expect(await countUnhandled(t.database.db, filter, 3)).toBe(4);
    }
    const [everyTenant] = await countUnhandledStatement(t.database.db, {}, 1000).explain<Explained>('json');
    expect(messageReads(everyTenant!)).toEqual({ indexes: ['messages_client_unhandled'], sorted: false });
    const counted = await t.http.get('/admin/v1/messages/unhandled-count', {
      token: t.adminToken,
      query: { tenantId: b.tenantId },
    });
    expect(counted.body.data).toEqual({ unhandled: MESSAGES / 500, more: false });
  });
});
