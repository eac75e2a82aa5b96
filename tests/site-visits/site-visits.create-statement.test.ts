/**
 * A visit's create without site assets reads its references first, or takes those an earlier create
 * found, and is then one statement (the visit, its ticket.created event, the event's deliveries and the
 * Idempotency-Key: src/modules/site-visits/service.ts `visitCreation`), which checks that those references
 * still hold. The read happens before the key is checked, so these prove that a key still decides first: a
 * completed request replays whatever its references have become since, and a different body is an
 * idempotency conflict, not the refusal its references would earn. And references that changed since an
 * earlier create found them are answered as they are now, never as they were.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin, siteBody } from '../helpers/tenants.js';
import { createItem, createProject, createVisit, postVisit, visitBody, visitTenant } from '../helpers/visits.js';

let t: TestApp;
beforeAll(async () => {
  // A public address for the subscription's host name; no delivery is attempted (no worker runs here).
  t = await startTestApp({ resolver: async () => ['93.184.216.34'] });
});
afterAll(async () => t?.close());

describe('a visit create with an Idempotency-Key', () => {
  it('replays the original answer after its project became Inactive', async () => {
    const v = await visitTenant(t);
    const key = randomUUID();
    const body = visitBody(v, { clientTicketNumber: `REPLAY-${key}` });
    const first = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: body,
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);

    const inactive = await admin(t, 'PATCH', `/admin/v1/tenants/${v.tenantId}/projects/${v.projectId}`, {
      status: 'Inactive',
    });
    expect(inactive.status).toBe(200);
    const again = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: body,
      headers: { 'idempotency-key': key },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);

    // Without the key, the same body is refused by the project rule.
    const fresh = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: { ...body, clientTicketNumber: 'NEW-1' },
    });
    expect(fresh.status).toBe(409);
    expect(fresh.body.type).toMatch(/invalid-project$/);
  });

  it('is a conflict, not a reference refusal, when the same key comes with another body', async () => {
    const v = await visitTenant(t);
    const key = randomUUID();
    const first = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v),
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    const other = await t.http.post('/api/v1/site-visits', {
      token: v.token,
      json: visitBody(v, { itemName: 'No such item' }),
      headers: { 'idempotency-key': key },
    });
    expect(other.status).toBe(409);
    expect(other.body.type).toMatch(/idempotency-conflict$/);
  });

  it('creates the visit, its one event and one delivery per subscription, or none of them, whichever request wins', async () => {
    const v = await visitTenant(t);
    const subscription = await t.http.post('/api/v1/webhook-subscriptions', {
      token: v.fullToken,
      json: {
        targetUrl: 'https://hooks.example.com/visits',
        eventTypes: ['ticket.created'],
        secret: 'a shared secret, 16+',
      },
    });
    expect(subscription.status, subscription.text).toBe(201);
    const key = randomUUID();
    const body = visitBody(v, { clientTicketNumber: `ONCE-${key}` });
    const responses = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.http.post('/api/v1/site-visits', { token: v.token, json: body, headers: { 'idempotency-key': key } }),
      ),
    );
    const created = responses.filter((response) => response.status === 201);
    expect(created.length).toBeGreaterThan(0);
    for (const response of responses) expect([201, 409]).toContain(response.status);
    expect(new Set(created.map((response) => response.body.data.id)).size).toBe(1);

    const { db } = t.database;
    const visits = await db.selectFrom('site_visits').select('id').where('tenant_id', '=', v.tenantId).execute();
    const events = await db.selectFrom('events').select('id').where('tenant_id', '=', v.tenantId).execute();
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'subscription_id'])
      .where('tenant_id', '=', v.tenantId)
      .execute();
    expect(visits).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(deliveries).toEqual([{ event_id: events[0]!.id, subscription_id: subscription.body.data.id }]);
  });
});

describe('a visit create naming references an earlier create found', () => {
  it('follows a site whose code changed: the old code is not found, the new one is the site', async () => {
    const v = await visitTenant(t);
    await createVisit(t, v);
    const renamed = await t.http.patch(`/api/v1/sites/${v.siteId}`, {
      token: v.fullToken,
      json: { siteCode: `${v.siteCode}-NEW` },
    });
    expect(renamed.status, renamed.text).toBe(200);

    const old = await postVisit(t, v, { clientTicketNumber: `OLD-${randomUUID()}` });
    expect(old.status).toBe(404);
    expect(old.body.detail).toContain(v.siteCode);
    const moved = await createVisit(t, { ...v, siteCode: `${v.siteCode}-NEW` });
    expect(moved.attributes.clientSiteId).toBe(`${v.siteCode}-NEW`);

    // The old code given to another site: a visit naming it goes there.
    const other = await t.http.post('/api/v1/sites', {
      token: v.fullToken,
      json: siteBody({ siteCode: v.siteCode }),
    });
    expect(other.status, other.text).toBe(201);
    const created = await createVisit(t, v);
    const stored = await t.database.db
      .selectFrom('site_visits')
      .select('site_id')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(stored.site_id).toBe(other.body.data.id);
  });

  it('answers a project as it is now: Inactive is refused, Active again is served in its own form', async () => {
    const v = await visitTenant(t);
    await createVisit(t, v);
    const path = `/admin/v1/tenants/${v.tenantId}/projects/${v.projectId}`;
    expect((await admin(t, 'PATCH', path, { status: 'Inactive' })).status).toBe(200);
    for (const headers of [{}, { 'idempotency-key': randomUUID() }] as Record<string, string>[]) {
      const refused = await t.http.post('/api/v1/site-visits', { token: v.token, json: visitBody(v), headers });
      expect(refused.status).toBe(409);
      expect(refused.body.type).toMatch(/invalid-project$/);
    }
    expect((await admin(t, 'PATCH', path, { status: 'Active' })).status).toBe(200);
    const created = await createVisit(t, v);
    expect(created.attributes.projectId).toBe(v.projectId);
  });

  it('refuses an item that is no longer there under its name, and a duplicate ticket number as a duplicate', async () => {
    const v = await visitTenant(t);
    const item = await createItem(t, v.tenantId);
    const project = await createProject(t, v.tenantId);
    const named = { ...v, itemName: item.itemName, projectId: Number(project.projectId) };
    const first = await createVisit(t, named);
    for (const headers of [{}, { 'idempotency-key': randomUUID() }] as Record<string, string>[]) {
      const again = await t.http.post('/api/v1/site-visits', {
        token: v.token,
        json: visitBody(named, { clientTicketNumber: first.attributes.clientTicketNumber }),
        headers,
      });
      expect(again.status).toBe(409);
      expect(again.body.type).toMatch(/duplicate-resource$/);
    }

    // No API renames an item; the operator's database can.
    await t.database.db
      .updateTable('items')
      .set({ item_name: `${item.itemName} (renamed)` })
      .where('tenant_id', '=', v.tenantId)
      .where('item_id', '=', String(item.itemId))
      .execute();
    const gone = await postVisit(t, named);
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toContain(item.itemName);
  });
});
