/**
 * The operator's inbox (GET /admin/v1/messages): every tenant's messages in arrival order, each a summary (tenant,
 * visit and ticket, sender, time, the text's beginning, whether it has an attachment), paged by limit and after as
 * the deliveries' list is, one tenant's with tenantId; the operator token only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, type MessageTenant, uploadAttachment, URGENCY } from '../helpers/messages.js';
import { pdfBytes } from '../helpers/multipart.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, visitTenant } from '../helpers/visits.js';

const INBOX = '/admin/v1/messages';
/** 250 characters, the first of them outside the BMP: the preview counts characters, not UTF-16 units. */
const LONG = `${'🛠️'.repeat(10)}${'x'.repeat(230)}`;
const EXACT = 'y'.repeat(200);

let t: TestApp;
/** The file's messages, in the order they were created (the only ones in the file's database). */
const sent: { id: string; tenant: MessageTenant; ticket: string }[] = [];
let a: MessageTenant;
let b: MessageTenant;
/** Each visit's ticket number, by visit id. */
const tickets = new Map<string, string>();

async function send(tenant: MessageTenant, overrides: Record<string, unknown> = {}) {
  const message = await createMessage(t, tenant, overrides);
  sent.push({ id: message.id, tenant, ticket: tickets.get(tenant.visitId)! });
  return message;
}
async function tenantWithVisit(): Promise<MessageTenant> {
  const v = await visitTenant(t, { assets: 0 });
  const visit = await createVisit(t, v);
  tickets.set(visit.id, visit.attributes.clientTicketNumber);
  return { ...v, visitId: visit.id };
}

const ids = (response: { body: any }) => response.body.data.map((message: any) => message.messageId);
const query = (params: Record<string, string | number>) => `${INBOX}?${new URLSearchParams(params as any)}`;

beforeAll(async () => {
  t = await startTestApp();
  a = await tenantWithVisit();
  b = await tenantWithVisit();
  await send(a, { messageThread: LONG });
  const attached = await send(b, { type: 'Shipping Damage', urgency: 'Critical' });
  expect((await uploadAttachment(t, b.token, attached.id, pdfBytes(1200))).status).toBe(201);
  await send(a, { messageThread: EXACT });
  await send(b);
  await send(a, { messageThread: 'Third note from A.' });
});
afterAll(async () => t?.close());

describe('GET /admin/v1/messages', () => {
  it("lists every tenant's messages in arrival order, each a summary of the message", async () => {
    const listed = await admin(t, 'GET', INBOX);
    expect(listed.status, listed.text).toBe(200);
    expect(ids(listed)).toEqual(sent.map((message) => message.id));
    expect(listed.headers.get('cache-control')).toBe('no-store');

    const names = new Map<string, string>();
    for (const tenant of [a, b])
      names.set(tenant.tenantId, (await admin(t, 'GET', `/admin/v1/tenants/${tenant.tenantId}`)).body.data.name);
    for (const [index, summary] of listed.body.data.entries()) {
      const { id, tenant, ticket } = sent[index]!;
      const read = (await t.http.get(`/api/v1/messages/${id}`, { token: tenant.token })).body.data;
      const message = read.attributes;
      expect(summary).toEqual({
        messageId: id,
        version: read.meta.version,
        tenantId: tenant.tenantId,
        tenantName: names.get(tenant.tenantId),
        siteVisitId: tenant.visitId,
        clientTicketNumber: ticket,
        sender: 'Client API',
        type: message.type,
        urgency: message.urgency,
        createdAt: message.createdAt,
        preview: [...message.messageThread].slice(0, 200).join(''),
        previewTruncated: [...message.messageThread].length > 200,
        hasFileAttachment: message.fileAttachment !== null,
        handledAt: null,
      });
    }
    // The long text cut at 200 characters (code points), the one of exactly 200 whole.
    const [long, attached, exact] = listed.body.data;
    expect([...long.preview]).toHaveLength(200);
    expect(long.preview.startsWith('🛠️'.repeat(10))).toBe(true);
    expect(long.previewTruncated).toBe(true);
    expect(exact).toMatchObject({ preview: EXACT, previewTruncated: false });
    expect(attached).toMatchObject({ type: 'Shipping Damage', urgency: URGENCY.Critical, hasFileAttachment: true });
  });

  it('lists newest first with order=desc', async () => {
    const listed = await admin(t, 'GET', query({ order: 'desc' }));
    expect(ids(listed)).toEqual(sent.map((message) => message.id).reverse());
  });

  it('pages with limit and after (the last messageId of the page before), in either order', async () => {
    for (const order of ['asc', 'desc'] as const) {
      const pages: string[][] = [];
      let after: string | undefined;
      for (;;) {
        const page = await admin(t, 'GET', query({ order, limit: 2, ...(after === undefined ? {} : { after }) }));
        expect(page.status, page.text).toBe(200);
        pages.push(ids(page));
        if (page.body.data.length < 2) break;
        after = page.body.data.at(-1).messageId;
      }
      const all = sent.map((message) => message.id);
      const expected = order === 'asc' ? all : all.reverse();
      expect(pages, order).toEqual([expected.slice(0, 2), expected.slice(2, 4), expected.slice(4)]);
    }
  });

  it("keeps one tenant's messages with tenantId, paged the same way; a tenant without messages lists none", async () => {
    const ofA = sent.filter((message) => message.tenant === a).map((message) => message.id);
    expect(ids(await admin(t, 'GET', query({ tenantId: a.tenantId })))).toEqual(ofA);
    const first = await admin(t, 'GET', query({ tenantId: a.tenantId, limit: 2 }));
    expect(ids(first)).toEqual(ofA.slice(0, 2));
    const next = await admin(t, 'GET', query({ tenantId: a.tenantId, limit: 2, after: ofA[1]! }));
    expect(ids(next)).toEqual(ofA.slice(2));
    const newest = await admin(t, 'GET', query({ tenantId: b.tenantId, order: 'desc', limit: 1 }));
    expect(ids(newest)).toEqual([sent.filter((message) => message.tenant === b).at(-1)!.id]);

    const unknown = await admin(t, 'GET', query({ tenantId: 'tnt_00000000000000000000000000' }));
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ data: [] });
  });

  it('is 422 for an after that names no message, a limit or order out of range, or an unknown parameter', async () => {
    const unknownAfter = await admin(t, 'GET', query({ after: 'msg_00000000000000000000000000' }));
    expect(unknownAfter.status).toBe(422);
    expect(unknownAfter.body.errors).toEqual({ after: ['names no message'] });
    const refusals: Record<string, string | number>[] = [
      { limit: 0 },
      { limit: 101 },
      { limit: 'many' },
      { order: 'sideways' },
      { tenantId: 'x'.repeat(101) },
      { 'page[size]': 2 },
      { visitStatus: 'New' },
      { handled: 'yes' },
    ];
    for (const params of refusals) {
      const refused = await admin(t, 'GET', query(params));
      expect(refused.status, JSON.stringify(params)).toBe(422);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('answers the operator token only: none, or a client token, is 401', async () => {
    const none = await t.http.get(INBOX);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect((await t.http.get(INBOX, { token: a.fullToken })).status).toBe(401);
  });
});
