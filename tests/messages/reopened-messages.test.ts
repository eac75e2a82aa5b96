/**
 * A client's change to a message the operator marked handled makes it not handled again (handledAt null, back in
 * the unhandled inbox and the count): a PATCH that changes a field, a new version of its attachment; not a PATCH
 * that changes nothing, nor one refused. Only the clients' messages (recordOwner `Client API`, the predicate of
 * messages_client_unhandled) are reopened. And the count of one tenant's (`unhandled-count?tenantId=`). Through
 * HTTP, with a manual clock.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, type MessageTenant, uploadAttachment } from '../helpers/messages.js';
import { pdfBytes } from '../helpers/multipart.js';
import { admin } from '../helpers/tenants.js';
import { ManualClock } from '../../src/lib/clock.js';

const clock = new ManualClock(new Date('2026-12-01T08:00:00Z'));

let t: TestApp;
let a: MessageTenant;
let b: MessageTenant;

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await messageTenant(t);
  b = await messageTenant(t);
});
afterAll(async () => t?.close());

async function handle(...messageIds: string[]) {
  const marked = await admin(t, 'POST', '/admin/v1/messages/handled', { messageIds });
  expect(marked.status, marked.text).toBe(200);
}

/** The message's handledAt as the inbox shows it, and whether the unhandled inbox lists it. */
async function inboxState(tenant: MessageTenant, messageId: string) {
  const query = new URLSearchParams({ tenantId: tenant.tenantId, limit: '100' });
  const all = await admin(t, 'GET', `/admin/v1/messages?${query}`);
  const unhandled = await admin(t, 'GET', `/admin/v1/messages?${query}&handled=false`);
  const listed = (response: typeof all) => response.body.data.map((m: { messageId: string }) => m.messageId);
  const summary = all.body.data.find((m: { messageId: string }) => m.messageId === messageId);
  return { handledAt: summary.handledAt as string | null, unhandled: listed(unhandled).includes(messageId) };
}

async function count(tenant?: MessageTenant) {
  const query = tenant === undefined ? '' : `?tenantId=${encodeURIComponent(tenant.tenantId)}`;
  const counted = await admin(t, 'GET', `/admin/v1/messages/unhandled-count${query}`);
  expect(counted.status, counted.text).toBe(200);
  return counted.body.data.unhandled as number;
}

function patch(messageId: string, tenant: MessageTenant, json: unknown, headers: Record<string, string> = {}) {
  return t.http.patch(`/api/v1/messages/${messageId}`, { token: tenant.token, json, headers });
}

describe("a client's change reopens a handled message", () => {
  it('a PATCH that changes a field: not handled again, in the unhandled inbox and the count', async () => {
    const message = await createMessage(t, a);
    await handle(message.id);
    const before = await count();
    expect(await inboxState(a, message.id)).toEqual({ handledAt: clock.now().toISOString(), unhandled: false });

    const patched = await patch(message.id, a, { messageThread: 'The key holder is now Ms. Rivera.' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.meta.version).toBe(2);
    expect(await inboxState(a, message.id)).toEqual({ handledAt: null, unhandled: true });
    expect(await count()).toBe(before + 1);
  });

  it('a new version of its attachment: not handled again', async () => {
    const message = await createMessage(t, a);
    expect((await uploadAttachment(t, a.token, message.id, pdfBytes())).status).toBe(201);
    await handle(message.id);
    const before = await count(a);

    const uploaded = await uploadAttachment(t, a.token, message.id, pdfBytes(3000), 'v2.pdf');
    expect(uploaded.status, uploaded.text).toBe(201);
    expect(await inboxState(a, message.id)).toEqual({ handledAt: null, unhandled: true });
    expect(await count(a)).toBe(before + 1);
  });

  it('a PATCH that changes nothing, and one refused, leave it handled', async () => {
    const message = await createMessage(t, a, { urgency: 'High' });
    await handle(message.id);
    const handledAt = clock.now().toISOString();
    const before = await count();

    // The same text, and the short urgency word of the stored full value: no new version.
    const same = await patch(message.id, a, { messageThread: message.attributes.messageThread, urgency: 'High' });
    expect(same.status, same.text).toBe(200);
    expect(same.body.data.meta.version).toBe(message.meta.version);
    // A stale If-Match (409) and an invalid field (422): nothing written.
    expect((await patch(message.id, a, { status: 'Closed' }, { 'if-match': '"7"' })).status).toBe(409);
    expect((await patch(message.id, a, { recordOwner: 'x' })).status).toBe(422);

    expect(await inboxState(a, message.id)).toEqual({ handledAt, unhandled: false });
    expect(await count()).toBe(before);
  });

  it('keeps a message that is not a client’s as it is, whatever changes it', async () => {
    // The operator API writes no message: a message of another record owner (as one brought in from the
    // operator's own system would be) is stored here, then handled through the API like any other.
    const client = await createMessage(t, b);
    const own = 'msg_operator_own_message_0001';
    await sql`insert into messages (id, tenant_id, site_visit_id, status, message_thread, svc_pm, record_owner,
        method, occurred_at)
      select ${own}, tenant_id, site_visit_id, status, message_thread, svc_pm, 'Operator', method, occurred_at
      from messages where id = ${client.id}`.execute(t.database.db);
    await handle(own);
    const handledAt = clock.now().toISOString();
    const before = await count(b);

    clock.advance(60_000);
    const patched = await patch(own, b, { messageThread: 'Changed by the client.' });
    expect(patched.status, patched.text).toBe(200);
    expect((await uploadAttachment(t, b.token, own, pdfBytes())).status).toBe(201);
    const read = await t.http.get(`/api/v1/messages/${own}`, { token: b.token });
    expect(read.body.data.meta.version).toBe(3);
    expect(await inboxState(b, own)).toEqual({ handledAt, unhandled: false });
    expect(await count(b)).toBe(before);
  });

  it('a message not handled stays not handled, and the operator marking it handled again sticks', async () => {
    const message = await createMessage(t, b);
    expect((await patch(message.id, b, { buyer: true })).status).toBe(200);
    expect(await inboxState(b, message.id)).toEqual({ handledAt: null, unhandled: true });
    await handle(message.id);
    expect((await inboxState(b, message.id)).unhandled).toBe(false);
  });
});

describe("GET /admin/v1/messages/unhandled-count?tenantId=: one tenant's", () => {
  it("counts the tenant's unhandled messages only; a tenant without messages has none", async () => {
    const tenant = await messageTenant(t);
    expect(await count(tenant)).toBe(0);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await createMessage(t, tenant)).id);
    const everyTenant = await count();
    expect(await count(tenant)).toBe(3);
    await handle(ids[0]!);
    expect(await count(tenant)).toBe(2);
    expect(await count()).toBe(everyTenant - 1);
    expect(await count({ ...tenant, tenantId: 'tnt_none' })).toBe(0);
  });

  it('refuses an unknown parameter and a tenantId over 100 characters (422)', async () => {
    for (const query of ['tenant=x', `tenantId=${'t'.repeat(101)}`]) {
      const refused = await admin(t, 'GET', `/admin/v1/messages/unhandled-count?${query}`);
      expect(refused.status, query).toBe(422);
    }
  });
});
