import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  createMessage,
  MESSAGE_TYPES,
  messageBody,
  messageTenant,
  type MessageTenant,
  URGENCY,
} from '../helpers/messages.js';
import { createVisit, visitBody } from '../helpers/visits.js';

let t: TestApp;
const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
/** For tests that only add messages of their own; tests that count make their own tenant. */
let m: MessageTenant;
beforeAll(async () => {
  t = await startTestApp({ clock });
  m = await messageTenant(t);
});
afterAll(async () => t?.close());

function post(json: unknown, token = m.token) {
  return t.http.post('/api/v1/messages', { token, json });
}

async function storedRow(id: string) {
  return t.database.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('POST /api/v1/messages', () => {
  it('creates a message with every writable field, with ETag "1"', async () => {
    const response = await post(
      messageBody(m, {
        type: 'Scope Update',
        status: 'Closed',
        urgency: URGENCY.High,
        buyer: true,
        clientContacts: false,
      }),
    );
    expect(response.status).toBe(201);
    expect(response.headers.get('etag')).toBe('"1"');
    const message = response.body.data;
    expect(message.id).toMatch(/^msg_[0-9a-z]{26}$/);
    expect(message.type).toBe('messages');
    expect(message.meta).toEqual({ version: 1, etag: '"1"' });
    expect(message.attributes).toEqual({
      clientId: m.tenantId,
      status: 'Closed',
      createdAt: clock.now().toISOString(),
      updatedAt: clock.now().toISOString(),
      siteVisitId: m.visitId,
      type: 'Scope Update',
      recordOwner: 'Client API',
      messageThread: messageBody(m).messageThread,
      fileAttachment: null,
      urgency: 'High \u2013 Needs attention soon',
      buyer: true,
      clientContacts: false,
      svcPm: true,
    });
  });

  it('defaults status to Open and answers the optional fields as null', async () => {
    const response = await post(messageBody(m));
    expect(response.status).toBe(201);
    expect(response.body.data.attributes).toMatchObject({
      status: 'Open',
      type: null,
      urgency: null,
      buyer: null,
      clientContacts: null,
      svcPm: true,
      fileAttachment: null,
    });
  });

  it('accepts null for the optional fields other than status', async () => {
    const response = await post(messageBody(m, { type: null, urgency: null, buyer: null, clientContacts: null }));
    expect(response.status).toBe(201);
    expect(response.body.data.attributes).toMatchObject({
      type: null,
      urgency: null,
      buyer: null,
      clientContacts: null,
    });
  });

  it('stores method Email and occurredAt now, which responses leave out', async () => {
    const created = await createMessage(t, m);
    const row = await storedRow(created.id);
    expect(row).toMatchObject({ method: 'Email', svc_pm: true, record_owner: 'Client API', site_visit_id: m.visitId });
    expect(row.occurred_at.toISOString()).toBe(clock.now().toISOString());
    expect(created.attributes).not.toHaveProperty('method');
    expect(created.attributes).not.toHaveProperty('occurredAt');
  });

  it('accepts each of the 26 message types', async () => {
    const responses = await Promise.all(MESSAGE_TYPES.map((type) => post(messageBody(m, { type }))));
    expect(responses.map((response) => response.status)).toEqual(MESSAGE_TYPES.map(() => 201));
    expect(responses.map((response) => response.body.data.attributes.type)).toEqual(MESSAGE_TYPES);
  });

  it.each(Object.entries(URGENCY))(
    'accepts urgency %s and its full value, returning the full value',
    async (short, full) => {
      for (const urgency of [short, full]) {
        const response = await post(messageBody(m, { urgency }));
        expect(response.status).toBe(201);
        expect(response.body.data.attributes.urgency).toBe(full);
        expect((await storedRow(response.body.data.id)).urgency).toBe(full);
      }
    },
  );

  it('keeps a message thread of 20,000 characters, line breaks and Unicode as sent', async () => {
    const thread = `${'Zeile 1: Grüße ✓\n'.repeat(1000)}`.slice(0, 20_000);
    const response = await post(messageBody(m, { messageThread: thread }));
    expect(response.status).toBe(201);
    expect(response.body.data.attributes.messageThread).toBe(thread);
  });

  it('does not change the visit it is added to', async () => {
    const visit = await createVisit(t, m);
    await post(messageBody({ visitId: visit.id }));
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: m.token });
    expect(read.body.data.meta.version).toBe(1);
  });
});

describe('Idempotency-Key on POST /api/v1/messages', () => {
  it('replays the original response, marked, and creates nothing more', async () => {
    const body = messageBody(m, { urgency: 'Low', messageThread: 'Replayed note' });
    const headers = { 'idempotency-key': 'message-row-1' };
    const first = await t.http.post('/api/v1/messages', { token: m.token, json: body, headers });
    expect(first.status).toBe(201);
    clock.advance(60_000);
    await t.http.patch(`/api/v1/messages/${first.body.data.id}`, { token: m.token, json: { status: 'Closed' } });
    const replay = await t.http.post('/api/v1/messages', { token: m.token, json: body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('etag')).toBe('"1"');
    // A snapshot: the later change does not show.
    expect(replay.body).toEqual(first.body);
    const count = await t.database.db
      .selectFrom('messages')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('tenant_id', '=', m.tenantId)
      .where('message_thread', '=', body.messageThread)
      .executeTakeFirstOrThrow();
    expect(Number(count.count)).toBe(1);
  });

  it('refuses the same key with another body (409 idempotency-conflict)', async () => {
    const headers = { 'idempotency-key': 'message-row-2' };
    expect((await t.http.post('/api/v1/messages', { token: m.token, json: messageBody(m), headers })).status).toBe(201);
    const conflict = await t.http.post('/api/v1/messages', {
      token: m.token,
      json: messageBody(m, { buyer: true }),
      headers,
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.type).toMatch(/idempotency-conflict$/);
  });

  it('stores nothing for a refused create, so the key can be used once the cause is fixed', async () => {
    const headers = { 'idempotency-key': 'message-row-3' };
    const refused = await t.http.post('/api/v1/messages', {
      token: m.token,
      json: messageBody({ visitId: 'visit_00000000000000000000000000' }),
      headers,
    });
    expect(refused.status).toBe(404);
    const fixed = await t.http.post('/api/v1/messages', { token: m.token, json: messageBody(m), headers });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps message keys apart from site and visit keys', async () => {
    const headers = { 'idempotency-key': 'shared-key-across-types' };
    const visit = await t.http.post('/api/v1/site-visits', { token: m.token, json: visitBody(m), headers });
    expect(visit.status).toBe(201);
    const message = await t.http.post('/api/v1/messages', { token: m.token, json: messageBody(m), headers });
    expect(message.status).toBe(201);
    expect(message.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('GET /api/v1/messages/{id}', () => {
  it('reads the message with its ETag', async () => {
    const created = await createMessage(t, m, { urgency: 'Critical', type: 'Reminder' });
    const response = await t.http.get(`/api/v1/messages/${created.id}`, { token: m.token });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"1"');
    expect(response.body.data).toEqual(created);
  });
});

describe('GET /api/v1/messages', () => {
  let own: MessageTenant;
  let ids: string[];
  beforeAll(async () => {
    own = await messageTenant(t);
    const second = await createVisit(t, own);
    ids = [];
    for (let index = 0; index < 5; index++) {
      clock.advance(1000);
      ids.push(
        (
          await createMessage(t, index % 2 === 0 ? own : { ...own, visitId: second.id }, {
            messageThread: `note ${index}`,
          })
        ).id,
      );
    }
  });

  it("lists the tenant's messages on all its visits, oldest first, with the default page size", async () => {
    const response = await t.http.get('/api/v1/messages', { token: own.token });
    expect(response.status).toBe(200);
    expect(response.body.data.map((message: { id: string }) => message.id)).toEqual(ids);
    expect(response.body.meta).toEqual({ pageSize: 25 });
    expect(response.body.data[0].attributes.messageThread).toBe('note 0');
  });

  it('pages with page[size] and page[after] until nextCursor is absent', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const response = await t.http.get('/api/v1/messages', {
        token: own.token,
        query: { 'page[size]': 2, 'page[after]': after },
      });
      expect(response.status).toBe(200);
      expect(response.body.meta.pageSize).toBe(2);
      seen.push(...response.body.data.map((message: { id: string }) => message.id));
      after = response.body.meta.nextCursor;
      pages += 1;
    } while (after !== undefined);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
  });

  it('has no nextCursor when the page holds the last record exactly', async () => {
    const response = await t.http.get('/api/v1/messages', { token: own.token, query: { 'page[size]': 5 } });
    expect(response.body.data).toHaveLength(5);
    expect(response.body.meta).toEqual({ pageSize: 5 });
  });

  it('answers an empty list for a tenant without messages', async () => {
    const empty = await messageTenant(t);
    const response = await t.http.get('/api/v1/messages', { token: empty.token });
    expect(response.body).toEqual({ data: [], meta: { pageSize: 25 } });
  });
});

/** The document with every `#/components/schemas/…` reference replaced by the schema it names. */
function dereferenced(document: any): any {
  const resolve = (value: any): any => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    if (typeof value.$ref === 'string' && value.$ref.startsWith('#/components/schemas/'))
      return resolve(document.components.schemas[value.$ref.slice('#/components/schemas/'.length)]);
    return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, resolve(member)]));
  };
  return { ...document, paths: resolve(document.paths) };
}

describe('the OpenAPI document', () => {
  let doc: any;
  beforeAll(async () => {
    doc = dereferenced((await t.http.get('/api/v1/openapi.json')).body);
  });
  const attributesOf = (operation: any) =>
    operation.responses['200'].content['application/json'].schema.properties.data.properties.attributes;

  it('shows the 8 accepted urgency values on create and patch, and only the 4 full ones in responses', () => {
    const accepted = [...Object.values(URGENCY), 'Low', 'Normal', 'High', 'Critical', null];
    const create = doc.paths['/api/v1/messages'].post.requestBody.content['application/json'].schema;
    const update = doc.paths['/api/v1/messages/{id}'].patch.requestBody.content['application/json'].schema;
    expect(create.properties.urgency.enum).toEqual(accepted);
    expect(update.properties.urgency.enum).toEqual(accepted);
    expect(attributesOf(doc.paths['/api/v1/messages/{id}'].get).properties.urgency.enum).toEqual([
      ...Object.values(URGENCY),
      null,
    ]);
  });

  it('lists the 26 message types and the two statuses', () => {
    const create = doc.paths['/api/v1/messages'].post.requestBody.content['application/json'].schema;
    expect(create.properties.type.enum).toEqual([...MESSAGE_TYPES, null]);
    expect(create.properties.status.enum).toEqual(['Open', 'Closed']);
    expect(create.required.sort()).toEqual(['messageThread', 'siteVisitId']);
  });

  it('keeps siteVisitId out of the patch body and marks it immutable', () => {
    const update = doc.paths['/api/v1/messages/{id}'].patch.requestBody.content['application/json'].schema;
    expect(update.properties).not.toHaveProperty('siteVisitId');
    expect(update['x-immutable']).toEqual(['siteVisitId']);
    expect(update.required ?? []).toEqual([]);
  });

  it("documents recordOwner's value and SPEC's required response members", () => {
    const attributes = attributesOf(doc.paths['/api/v1/messages/{id}'].get);
    expect(attributes.properties.recordOwner).toMatchObject({
      type: 'string',
      description: expect.stringContaining('Client API'),
    });
    expect(attributes.required.sort()).toEqual([
      'clientId',
      'createdAt',
      'messageThread',
      'siteVisitId',
      'status',
      'updatedAt',
    ]);
    expect(attributes.properties).not.toHaveProperty('method');
    expect(attributes.properties).not.toHaveProperty('occurredAt');
  });
});
