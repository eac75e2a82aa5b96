import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageBody, messageTenant, type MessageTenant, URGENCY } from '../helpers/messages.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { visitBody } from '../helpers/visits.js';

let t: TestApp;
/** Requests here are refused before anything is written, or write messages of their own. */
let m: MessageTenant;
let messageId: string;
beforeAll(async () => {
  t = await startTestApp();
  m = await messageTenant(t);
  messageId = (await createMessage(t, m, { urgency: 'High' })).id;
});
afterAll(async () => t?.close());

function post(body: unknown) {
  return t.http.post('/api/v1/messages', { token: m.token, json: body });
}

function patch(body: unknown, id = messageId) {
  return t.http.patch(`/api/v1/messages/${id}`, { token: m.token, json: body });
}

const ACCEPTED_URGENCIES = [...Object.values(URGENCY), 'Low', 'Normal', 'High', 'Critical'];

describe('create body validation (422)', () => {
  it.each(['siteVisitId', 'messageThread'])('requires %s', async (field) => {
    const body: Record<string, unknown> = messageBody(m);
    delete body[field];
    expect(expectInvalid(await post(body), [field])[field]).toEqual(['is required']);
  });

  it.each(['siteVisitId', 'messageThread', 'status'])('refuses null for %s', async (field) => {
    expectInvalid(await post(messageBody(m, { [field]: null })), [field]);
  });

  it('names every missing field at once', async () => {
    expectInvalid(await post({}), ['siteVisitId', 'messageThread']);
  });

  it.each([
    ['type', 'scope update'],
    ['type', 'Scope update'],
    ['type', 'Job On Hold'],
    ['type', 'MFG / Hardware Issues'],
    ['type', 'Urgent'],
    ['type', ''],
    ['type', 7],
    ['status', 'open'],
    ['status', 'Pending'],
    ['status', 'Closed '],
    ['status', true],
    ['buyer', 'true'],
    ['buyer', 1],
    ['clientContacts', 'no'],
  ])('refuses %s %j', async (field, value) => {
    expectInvalid(await post(messageBody(m, { [field]: value })), [field]);
  });

  it.each([
    ['low', 'a short word in lower case'],
    ['LOW', 'a short word in upper case'],
    ['Low ', 'a trailing space'],
    [' Low', 'a leading space'],
    ['Urgent', 'an unknown word'],
    ['Low - No immediate action required', 'a hyphen instead of the en dash'],
    ['Low \u2014 No immediate action required', 'an em dash instead of the en dash'],
    ['Low\u2013No immediate action required', 'no spaces around the en dash'],
    ['Low \u2013 No immediate action required ', 'a trailing space after the full value'],
    ['Low \u2013 no immediate action required', 'a change of case in the text'],
    ['Low \u2013', 'the word and the dash only'],
    ['High \u2013 Immediate action required', 'the text of another value'],
    ['', 'an empty string'],
  ])('refuses urgency %j (%s), listing the accepted values', async (urgency) => {
    const errors = expectInvalid(await post(messageBody(m, { urgency })), ['urgency']);
    expect(errors.urgency).toHaveLength(1);
    for (const value of ACCEPTED_URGENCIES) expect(errors.urgency![0]).toContain(value);
  });

  it.each([
    ['svcPm', false],
    ['recordOwner', 'Someone'],
    ['method', 'Phone'],
    ['occurredAt', '2026-01-01T00:00:00Z'],
    ['fileAttachment', null],
    ['clientId', 'tnt_x'],
    ['createdAt', '2026-01-01T00:00:00Z'],
    ['updatedAt', '2026-01-01T00:00:00Z'],
    ['id', 'msg_x'],
  ])('refuses the read-only field %s', async (field, value) => {
    expect(expectInvalid(await post(messageBody(m, { [field]: value })), [field])[field]).toEqual([
      'is read-only and cannot be written',
    ]);
  });

  it('refuses unknown fields', async () => {
    expect(expectInvalid(await post(messageBody(m, { priority: 'high' })), ['priority']).priority).toEqual([
      'is not a known field',
    ]);
  });

  it('names every failing field at once', async () => {
    expectInvalid(await post(messageBody(m, { svcPm: true, urgency: 'low', type: 'Nope', messageThread: '' })), [
      'svcPm',
      'urgency',
      'type',
      'messageThread',
    ]);
  });

  it.each([
    ['messageThread', ''],
    ['messageThread', 'x'.repeat(20_001)],
    ['siteVisitId', ''],
    ['siteVisitId', 'x'.repeat(101)],
  ])('refuses %s of length %#', async (field, value) => {
    expectInvalid(await post(messageBody(m, { [field]: value })), [field]);
  });

  it('refuses a body that is not an object', async () => {
    expectInvalid(await post([messageBody(m)]), ['body']);
  });

  it('checks the body before the visit', async () => {
    expectInvalid(await post(messageBody({ visitId: 'visit_00000000000000000000000000' }, { status: 'Done' })), [
      'status',
    ]);
  });
});

describe('siteVisitId (404)', () => {
  it.each([
    ['an unknown visit id', 'visit_00000000000000000000000000'],
    ['an id of another kind', 'site_00000000000000000000000000'],
    ['a visit id in another case', () => m.visitId.toUpperCase()],
  ])('refuses %s with 404 naming siteVisitId', async (_label, value) => {
    const siteVisitId = typeof value === 'function' ? value() : value;
    const response = await post(messageBody(m, { siteVisitId }));
    expectProblem(response, 404, 'not-found', ['siteVisitId']);
    expect(response.body.detail).toContain(siteVisitId);
  });
});

describe('patch body validation (422)', () => {
  it('refuses siteVisitId, saying that it cannot be changed', async () => {
    const response = await patch({ siteVisitId: m.visitId });
    expect(expectInvalid(response, ['siteVisitId']).siteVisitId).toEqual(['is set on create and cannot be changed']);
  });

  it('refuses siteVisitId together with valid fields, changing nothing', async () => {
    expectInvalid(await patch({ siteVisitId: m.visitId, status: 'Closed' }), ['siteVisitId']);
    const read = await t.http.get(`/api/v1/messages/${messageId}`, { token: m.token });
    expect(read.body.data.attributes.status).toBe('Open');
    expect(read.body.data.meta.version).toBe(1);
  });

  it.each([
    ['status', null],
    ['status', 'closed'],
    ['messageThread', null],
    ['messageThread', ''],
    ['messageThread', 'x'.repeat(20_001)],
    ['type', 'Billing'],
    ['urgency', 'low'],
    ['urgency', 'High - Needs attention soon'],
    ['buyer', 'yes'],
    ['clientContacts', 0],
    ['svcPm', false],
    ['recordOwner', 'Client API'],
    ['method', 'Email'],
    ['occurredAt', '2026-01-01T00:00:00Z'],
    ['fileAttachment', null],
    ['clientId', 'tnt_x'],
    ['updatedAt', '2026-01-01T00:00:00Z'],
    ['color', 'red'],
  ])('refuses %s %j', async (field, value) => {
    expectInvalid(await patch({ [field]: value }), [field]);
  });

  it('lists the accepted urgencies on a patch too', async () => {
    const errors = expectInvalid(await patch({ urgency: 'Critical!' }), ['urgency']);
    for (const value of ACCEPTED_URGENCIES) expect(errors.urgency![0]).toContain(value);
  });

  it('validates the body before looking for the message', async () => {
    expectInvalid(await patch({ status: 'Done' }, 'msg_00000000000000000000000000'), ['status']);
  });

  it('answers 404 for an unknown message', async () => {
    expectProblem(await patch({ status: 'Closed' }, 'msg_00000000000000000000000000'), 404, 'not-found');
  });

  it('refuses If-Match longer than 256 characters with 422', async () => {
    const response = await t.http.patch(`/api/v1/messages/${messageId}`, {
      token: m.token,
      json: {},
      headers: { 'if-match': `"${'1'.repeat(300)}"` },
    });
    expectInvalid(response, ['If-Match']);
  });
});

describe('Idempotency-Key', () => {
  it.each([
    ['a key with a space', 'two words'],
    ['a key of 256 characters', 'k'.repeat(256)],
  ])('refuses %s with 422', async (_label, key) => {
    const response = await t.http.post('/api/v1/messages', {
      token: m.token,
      json: messageBody(m),
      headers: { 'idempotency-key': key },
    });
    expectInvalid(response, ['Idempotency-Key']);
  });
});

describe('GET /api/v1/messages', () => {
  it.each([
    [{ 'page[size]': 0 }, 'page[size]'],
    [{ 'page[size]': 101 }, 'page[size]'],
    [{ 'page[size]': 2.5 }, 'page[size]'],
    [{ 'page[size]': 'x' }, 'page[size]'],
    [{ 'page[after]': 'not-a-cursor' }, 'page[after]'],
    [{ siteVisitId: '' }, 'siteVisitId'],
    [{ siteVisitId: `visit_${'x'.repeat(100)}` }, 'siteVisitId'],
    [{ status: 'Open' }, 'status'],
  ])('refuses %j with 422', async (query, field) => {
    expectInvalid(await t.http.get('/api/v1/messages', { token: m.token, query }), [field]);
  });

  it('refuses a cursor of another list or of another tenant', async () => {
    const visits = await t.http.get('/api/v1/site-visits', { token: m.token, query: { 'page[size]': 1 } });
    await t.http.post('/api/v1/site-visits', { token: m.token, json: visitBody(m) });
    const visitCursor =
      (await t.http.get('/api/v1/site-visits', { token: m.token, query: { 'page[size]': 1 } })).body.meta.nextCursor ??
      visits.body.meta.nextCursor;
    expect(visitCursor).toEqual(expect.any(String));
    expectInvalid(await t.http.get('/api/v1/messages', { token: m.token, query: { 'page[after]': visitCursor } }), [
      'page[after]',
    ]);

    const other = await messageTenant(t);
    await createMessage(t, other);
    await createMessage(t, other);
    const foreign = await t.http.get('/api/v1/messages', { token: other.token, query: { 'page[size]': 1 } });
    expect(foreign.body.meta.nextCursor).toEqual(expect.any(String));
    expectInvalid(
      await t.http.get('/api/v1/messages', { token: m.token, query: { 'page[after]': foreign.body.meta.nextCursor } }),
      ['page[after]'],
    );
  });
});

describe('GET /api/v1/messages/{id}', () => {
  it.each(['msg_00000000000000000000000000', 'visit_00000000000000000000000000', 'nothing'])(
    'answers 404 for %s',
    async (id) => {
      expectProblem(await t.http.get(`/api/v1/messages/${id}`, { token: m.token }), 404, 'not-found');
    },
  );

  it('answers 405 for a method the path does not support', async () => {
    const response = await t.http.delete(`/api/v1/messages/${messageId}`, { token: m.token });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toContain('PATCH');
  });
});
