import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { describeAuthentication } from '../helpers/scopes.js';
import { pdfBytes } from '../helpers/multipart.js';
import {
  attachmentPath,
  createMessage,
  messageBody,
  messageTenant,
  type MessageTenant,
  uploadAttachment,
} from '../helpers/messages.js';
import { tokenFor } from '../helpers/tenants.js';

let t: TestApp;
let owner: MessageTenant;
let intruder: MessageTenant;
let messageId: string;
const SECRET_TEXT = 'Owner-only: the alarm code is 4711';
beforeAll(async () => {
  t = await startTestApp();
  [owner, intruder] = await Promise.all([messageTenant(t), messageTenant(t)]);
  messageId = (await createMessage(t, owner, { messageThread: SECRET_TEXT })).id;
  expect((await uploadAttachment(t, owner.token, messageId, pdfBytes(1000))).status).toBe(201);
});
afterAll(async () => t?.close());

const ROUTES = [
  { method: 'GET', route: '/api/v1/messages', path: () => '/api/v1/messages', scope: 'site-visits:read' },
  { method: 'POST', route: '/api/v1/messages', path: () => '/api/v1/messages', scope: 'site-visits:write' },
  {
    method: 'GET',
    route: '/api/v1/messages/{id}',
    path: () => `/api/v1/messages/${messageId}`,
    scope: 'site-visits:read',
  },
  {
    method: 'PATCH',
    route: '/api/v1/messages/{id}',
    path: () => `/api/v1/messages/${messageId}`,
    scope: 'site-visits:write',
  },
  {
    method: 'POST',
    route: '/api/v1/messages/{id}/file-attachment',
    path: () => attachmentPath(messageId),
    scope: 'site-visits:write',
  },
  {
    method: 'GET',
    route: '/api/v1/messages/{id}/file-attachment',
    path: () => attachmentPath(messageId),
    scope: 'site-visits:read',
  },
];

async function readAsOwner() {
  return (await t.http.get(`/api/v1/messages/${messageId}`, { token: owner.token })).body.data;
}

describeAuthentication(
  () => t,
  () => owner,
  ROUTES,
);

describe('scopes of read-only and write-only tokens', () => {
  it('lets a write-only token create, patch and upload, and answers it the message', async () => {
    const writeOnly = await tokenFor(t, owner, 'site-visits:write');
    const created = await t.http.post('/api/v1/messages', {
      token: writeOnly,
      json: messageBody(owner, { urgency: 'Normal' }),
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const patched = await t.http.patch(`/api/v1/messages/${id}`, {
      token: writeOnly,
      json: { status: 'Closed' },
      headers: { 'if-match': '"1"' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes.status).toBe('Closed');
    expect((await uploadAttachment(t, writeOnly, id, pdfBytes())).status).toBe(201);
    expect((await t.http.get(`/api/v1/messages/${id}`, { token: writeOnly })).status).toBe(403);
  });

  it('lets a read-only token list, read and download, but not write', async () => {
    const readOnly = await tokenFor(t, owner, 'site-visits:read');
    expect((await t.http.get('/api/v1/messages', { token: readOnly })).status).toBe(200);
    expect((await t.http.get(`/api/v1/messages/${messageId}`, { token: readOnly })).status).toBe(200);
    expect((await t.http.get(attachmentPath(messageId), { token: readOnly })).status).toBe(200);
    expect((await t.http.post('/api/v1/messages', { token: readOnly, json: messageBody(owner) })).status).toBe(403);
    expect(
      (await t.http.patch(`/api/v1/messages/${messageId}`, { token: readOnly, json: { status: 'Closed' } })).status,
    ).toBe(403);
    expect((await uploadAttachment(t, readOnly, messageId, pdfBytes())).status).toBe(403);
  });

  it('does not accept a sites-only token on any message route', async () => {
    const sitesOnly = await tokenFor(t, owner, 'sites:read sites:write');
    for (const { method, path } of ROUTES) {
      expect(
        (await t.http.request(method, path(), { token: sitesOnly, ...(method === 'GET' ? {} : { json: {} }) })).status,
      ).toBe(403);
    }
  });
});

describe('tenant isolation', () => {
  it("does not read another tenant's message", async () => {
    const response = await t.http.get(`/api/v1/messages/${messageId}`, { token: intruder.token });
    expect(response.status).toBe(404);
    expect(response.body.type).toMatch(/not-found$/);
    expect(response.text).not.toContain(SECRET_TEXT);
  });

  it("does not list another tenant's messages", async () => {
    await createMessage(t, intruder);
    const list = await t.http.get('/api/v1/messages', { token: intruder.token });
    expect(list.body.data.length).toBeGreaterThan(0);
    expect(list.body.data.map((message: { id: string }) => message.id)).not.toContain(messageId);
    expect(list.text).not.toContain(SECRET_TEXT);
  });

  it("does not patch another tenant's message, with or without If-Match", async () => {
    const before = await readAsOwner();
    for (const headers of [{}, { 'if-match': before.meta.etag as string }] as Record<string, string>[]) {
      const response = await t.http.patch(`/api/v1/messages/${messageId}`, {
        token: intruder.token,
        json: { messageThread: 'Hijacked' },
        headers,
      });
      expect(response.status).toBe(404);
    }
    expect(await readAsOwner()).toEqual(before);
  });

  it("does not add a message to another tenant's visit", async () => {
    const response = await t.http.post('/api/v1/messages', { token: intruder.token, json: messageBody(owner) });
    expect(response.status).toBe(404);
    expect(response.body.errors).toEqual({ siteVisitId: ['is not one of your site visits'] });
    const count = await t.database.db
      .selectFrom('messages')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('tenant_id', '=', intruder.tenantId)
      .where('site_visit_id', '=', owner.visitId)
      .executeTakeFirstOrThrow();
    expect(Number(count.count)).toBe(0);
  });

  it("does not upload to another tenant's message", async () => {
    const before = await readAsOwner();
    const response = await uploadAttachment(t, intruder.token, messageId, pdfBytes(1000));
    expect(response.status).toBe(404);
    expect(await readAsOwner()).toEqual(before);
  });

  it("does not download another tenant's attachment", async () => {
    const response = await t.http.get(attachmentPath(messageId), { token: intruder.token });
    expect(response.status).toBe(404);
    expect(response.contentType).toMatch(/problem\+json/);
  });

  it("cannot reach another tenant's message through an Idempotency-Key", async () => {
    const headers = { 'idempotency-key': 'same-message-key-two-tenants' };
    const mine = await t.http.post('/api/v1/messages', { token: owner.token, json: messageBody(owner), headers });
    const theirs = await t.http.post('/api/v1/messages', {
      token: intruder.token,
      json: messageBody(intruder),
      headers,
    });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
    expect(theirs.body.data.attributes.clientId).toBe(intruder.tenantId);
  });

  it("refuses the owner's visit id even with the owner's exact create body", async () => {
    const headers = { 'idempotency-key': 'replay-of-owner-body' };
    expect(
      (await t.http.post('/api/v1/messages', { token: owner.token, json: messageBody(owner), headers })).status,
    ).toBe(201);
    expect(
      (await t.http.post('/api/v1/messages', { token: intruder.token, json: messageBody(owner), headers })).status,
    ).toBe(404);
  });
});
