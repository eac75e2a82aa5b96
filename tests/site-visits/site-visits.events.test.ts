import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEventsOfResource } from '../../src/modules/outbox/repository/events.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { visitBody, visitTenant } from '../helpers/visits.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function tenantEvents(tenantId: string) {
  return t.database.db.selectFrom('events').selectAll().where('tenant_id', '=', tenantId).orderBy('seq').execute();
}

describe('ticket.created', () => {
  it('is recorded with the create, carrying clientTicketNumber, clientSiteId and status', async () => {
    const v = await visitTenant(t);
    const response = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { clientTicketNumber: 'EVT-1' }),
    });
    expect(response.status).toBe(201);
    const visit = response.body.data;

    const events = await listEventsOfResource(t.database.db, v.tenantId, visit.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      type: 'ticket.created',
      resource_type: 'site-visits',
      resource_id: visit.id,
      payload_version: '2026-11-01',
      data: { clientTicketNumber: 'EVT-1', clientSiteId: v.siteCode, status: 'New' },
    });
    expect(events[0]!.occurred_at.toISOString()).toBe(visit.attributes.createdAt);
  });

  it('carries null (never absent) for a visit without a ticket number', async () => {
    const v = await visitTenant(t);
    const response = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { clientTicketNumber: undefined }),
    });
    const [event] = await listEventsOfResource(t.database.db, v.tenantId, response.body.data.id);
    expect(event!.data).toEqual({ clientTicketNumber: null, clientSiteId: v.siteCode, status: 'New' });
  });

  it('is not recorded for a failed create, nor for a patch', async () => {
    const v = await visitTenant(t);
    const failures = await Promise.all([
      t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v, { projectId: 999_999_999_999 }) }),
      t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v, { siteAssetIds: [1] }) }),
      t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v, { itemName: 'Nope' }) }),
    ]);
    expect(failures.map((response) => response.status)).toEqual([409, 409, 404]);
    expect(await tenantEvents(v.tenantId)).toEqual([]);

    const created = await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v) });
    await t.http.patch(`/api/v1/site-visits/${created.body.data.id}`, {
      token: v.token,
      json: { description: 'Changed' },
    });
    expect((await tenantEvents(v.tenantId)).map((event) => event.type)).toEqual(['ticket.created']);
  });
});

describe('Idempotency-Key on create', () => {
  it('replays the original response (status, body, ETag) without a second visit or event', async () => {
    const v = await visitTenant(t);
    const body = visitBody(v, { siteAssetIds: v.assetIds });
    const headers = { 'idempotency-key': 'import-row-1' };
    const first = await t.http.post('/api/v1/site-visits', { token: v.token, json: body, headers });
    await t.http.patch(`/api/v1/site-visits/${first.body.data.id}`, {
      token: v.token,
      json: { description: 'Changed since' },
    });
    const replay = await t.http.post('/api/v1/site-visits', { token: v.token, json: body, headers });

    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('etag')).toBe('"1"');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const list = await t.http.get('/api/v1/site-visits', { token: v.token });
    expect(list.body.data).toHaveLength(1);
    expect(await tenantEvents(v.tenantId)).toHaveLength(1);
  });

  it('refuses the same key with a different body with 409 idempotency-conflict', async () => {
    const v = await visitTenant(t);
    const headers = { 'idempotency-key': 'import-row-2' };
    expect((await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v), headers })).status).toBe(
      201,
    );
    const conflict = await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v), headers });
    expect(conflict.status).toBe(409);
    expect(conflict.body.type).toMatch(/idempotency-conflict$/);
    expect(await tenantEvents(v.tenantId)).toHaveLength(1);
  });

  it('keeps nothing of a failed create, so the key can be retried after the cause is fixed', async () => {
    const v = await visitTenant(t);
    const headers = { 'idempotency-key': 'import-row-3' };
    const body = visitBody(v, { itemName: 'Not yet provisioned' });
    expect((await t.http.post('/api/v1/site-visits', { token: v.token, json: body, headers })).status).toBe(404);
    const fixed = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: { ...body, itemName: v.itemName },
      headers,
    });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    expect(await tenantEvents(v.tenantId)).toHaveLength(1);
  });

  it('keeps keys of site visits apart from keys of sites', async () => {
    const v = await visitTenant(t);
    const headers = { 'idempotency-key': 'shared-key' };
    expect((await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v), headers })).status).toBe(
      201,
    );
    const site = await t.http.post('/api/v1/sites', {
      token: v.fullToken,
      json: {
        name: 'S',
        siteCode: `K-${v.siteCode}`,
        addressLine1: 'a',
        city: 'c',
        stateRegion: 's',
        postalCode: '1',
        country: 'US',
      },
      headers,
    });
    expect(site.status).toBe(201);
    expect(site.headers.get('idempotent-replayed')).toBeNull();
  });
});
