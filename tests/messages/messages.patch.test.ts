import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, type MessageTenant, URGENCY } from '../helpers/messages.js';
import { expectProblem } from '../helpers/problems.js';

let t: TestApp;
const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let m: MessageTenant;
beforeAll(async () => {
  t = await startTestApp({ clock });
  m = await messageTenant(t);
});
afterAll(async () => t?.close());

function patch(id: string, json: unknown, headers: Record<string, string> = {}) {
  return t.http.patch(`/api/v1/messages/${id}`, { token: m.token, json, headers });
}

describe('PATCH /api/v1/messages/{id}', () => {
  it('changes only the supplied fields, adds 1 to the version and moves updatedAt', async () => {
    const created = await createMessage(t, m, { type: 'General', urgency: 'Normal', buyer: false });
    clock.advance(5000);
    const response = await patch(created.id, { status: 'Closed', messageThread: 'Resolved on site.' });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"2"');
    expect(response.body.data.meta).toEqual({ version: 2, etag: '"2"' });
    expect(response.body.data.attributes).toEqual({
      ...created.attributes,
      status: 'Closed',
      messageThread: 'Resolved on site.',
      updatedAt: clock.now().toISOString(),
    });
    expect(response.body.data.attributes.createdAt).toBe(created.attributes.createdAt);
  });

  it('writes every writable field at once', async () => {
    const created = await createMessage(t, m);
    const response = await patch(created.id, {
      type: 'Billing Dispute',
      messageThread: 'Invoice 42 is wrong.',
      status: 'Closed',
      urgency: URGENCY.Critical,
      buyer: true,
      clientContacts: true,
    });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes).toMatchObject({
      type: 'Billing Dispute',
      messageThread: 'Invoice 42 is wrong.',
      status: 'Closed',
      urgency: URGENCY.Critical,
      buyer: true,
      clientContacts: true,
      svcPm: true,
      recordOwner: 'Client API',
      siteVisitId: m.visitId,
    });
    expect(response.body.data.meta.version).toBe(2);
  });

  it('stores a short urgency word as its full value', async () => {
    const created = await createMessage(t, m);
    const response = await patch(created.id, { urgency: 'Low' });
    expect(response.body.data.attributes.urgency).toBe(URGENCY.Low);
  });

  it('clears the nullable fields with null', async () => {
    const created = await createMessage(t, m, { type: 'Other', urgency: 'High', buyer: true, clientContacts: false });
    const response = await patch(created.id, { type: null, urgency: null, buyer: null, clientContacts: null });
    expect(response.status).toBe(200);
    expect(response.body.data.attributes).toMatchObject({
      type: null,
      urgency: null,
      buyer: null,
      clientContacts: null,
    });
    expect(response.body.data.meta.version).toBe(2);
  });

  it.each([
    ['an empty body', {}],
    ['the stored values', { status: 'Open', type: 'Reminder', buyer: false }],
    ['the short word of the stored urgency', { urgency: 'High' }],
    ['the full stored urgency', { urgency: URGENCY.High }],
  ])('keeps the version and updatedAt for %s', async (_label, body) => {
    const created = await createMessage(t, m, { type: 'Reminder', urgency: 'High', buyer: false });
    clock.advance(1000);
    const response = await patch(created.id, body);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"1"');
    expect(response.body.data).toEqual(created);
  });
});

describe('If-Match on PATCH /api/v1/messages/{id}', () => {
  it('applies the change when If-Match is the current ETag', async () => {
    const created = await createMessage(t, m);
    const response = await patch(created.id, { status: 'Closed' }, { 'if-match': created.meta.etag });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"2"');
  });

  it('refuses a stale ETag with 409 version-conflict and changes nothing', async () => {
    const created = await createMessage(t, m);
    await patch(created.id, { buyer: true });
    const stale = await patch(created.id, { status: 'Closed' }, { 'if-match': '"1"' });
    expectProblem(stale, 409, 'version-conflict');
    const read = await t.http.get(`/api/v1/messages/${created.id}`, { token: m.token });
    expect(read.body.data.attributes.status).toBe('Open');
    expect(read.body.data.meta.version).toBe(2);
  });

  it('refuses a malformed (unquoted) If-Match with 422 naming If-Match', async () => {
    const created = await createMessage(t, m);
    const response = await patch(created.id, { status: 'Closed' }, { 'if-match': '1' });
    expectProblem(response, 422, 'validation-error');
    expect(Object.keys(response.body.errors)).toEqual(['If-Match']);
  });

  it('lets exactly one of concurrent writers holding the same ETag win', async () => {
    const created = await createMessage(t, m);
    const responses = await Promise.all(
      ['a', 'b', 'c'].map((text) =>
        patch(created.id, { messageThread: `writer ${text}` }, { 'if-match': created.meta.etag }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409]);
    const read = await t.http.get(`/api/v1/messages/${created.id}`, { token: m.token });
    expect(read.body.data.meta.version).toBe(2);
  });
});
