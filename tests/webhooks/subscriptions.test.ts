/** Webhook subscriptions, happy paths (SPEC: Webhook subscription, Webhook subscriptions endpoint rules). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/modules/outbox/resolvers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';

const resolver: Resolver = async () => ['93.184.216.34'];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ resolver });
});
afterAll(async () => t?.close());

const SECRET = 'a shared secret, long enough';

async function create(token: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return t.http.post('/api/v1/webhook-subscriptions', {
    token,
    headers,
    json: {
      targetUrl: 'https://hooks.example.com/site-services',
      eventTypes: ['ticket.created', 'job.completed'],
      secret: SECRET,
      ...body,
    },
  });
}

describe('webhook subscriptions', () => {
  it('creates an active v1 subscription and returns it flat inside data, without the secret', async () => {
    const tenant = await tenantWithToken(t);
    const response = await create(tenant.token, { description: 'Production receiver' });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body)).toEqual(['data']);
    const data = response.body.data;
    expect(Object.keys(data).sort()).toEqual([
      'createdAt',
      'description',
      'eventTypes',
      'id',
      'isActive',
      'signingVersion',
      'targetUrl',
      'tenantId',
      'updatedAt',
    ]);
    expect(data).toMatchObject({
      tenantId: tenant.tenantId,
      targetUrl: 'https://hooks.example.com/site-services',
      description: 'Production receiver',
      eventTypes: ['ticket.created', 'job.completed'],
      isActive: true,
      signingVersion: 'v1',
    });
    expect(data.id).toMatch(/^whsub_[0-9a-z]{26}$/);
    expect(data.createdAt).toBe(data.updatedAt);
    expect(response.text).not.toContain(SECRET);
  });

  it('accepts an explicit signingVersion v1 and leaves description null when not given', async () => {
    const tenant = await tenantWithToken(t);
    const response = await create(tenant.token, { signingVersion: 'v1' });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ signingVersion: 'v1', description: null });
  });

  it("lists the tenant's subscriptions oldest first as {data: [...]} only", async () => {
    const tenant = await tenantWithToken(t);
    const other = await tenantWithToken(t);
    const first = await create(tenant.token, { description: 'first' });
    const second = await create(tenant.token, { description: 'second', targetUrl: 'https://hooks.example.com/second' });
    await create(other.token);
    const list = await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token });
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['data']);
    expect(list.body.data.map((subscription: any) => subscription.id)).toEqual([
      first.body.data.id,
      second.body.data.id,
    ]);
    expect(list.body.data[0]).toEqual(first.body.data);
    expect(list.text).not.toContain(SECRET);
  });

  it('patches only the supplied fields and keeps the signing version on metadata changes and rotation', async () => {
    const tenant = await tenantWithToken(t);
    const created = (await create(tenant.token)).body.data;
    const path = `/api/v1/webhook-subscriptions/${created.id}`;

    const renamed = await t.http.patch(path, {
      token: tenant.token,
      json: { description: 'renamed', eventTypes: ['rep.assigned'] },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      ...created,
      description: 'renamed',
      eventTypes: ['rep.assigned'],
      updatedAt: renamed.body.data.updatedAt,
    });
    expect(renamed.body.data.signingVersion).toBe('v1');

    const moved = await t.http.patch(path, {
      token: tenant.token,
      json: { targetUrl: 'https://hooks.example.com:443/moved' },
    });
    expect(moved.body.data).toMatchObject({
      targetUrl: 'https://hooks.example.com:443/moved',
      description: 'renamed',
      signingVersion: 'v1',
    });

    const rotated = await t.http.patch(path, { token: tenant.token, json: { secret: 'the next secret, rotated' } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.signingVersion).toBe('v1');
    expect(rotated.text).not.toContain('the next secret, rotated');

    const cleared = await t.http.patch(path, { token: tenant.token, json: { description: null } });
    expect(cleared.body.data.description).toBeNull();
  });

  it('answers an empty or no-op patch with the current representation', async () => {
    const tenant = await tenantWithToken(t);
    const created = (await create(tenant.token)).body.data;
    const path = `/api/v1/webhook-subscriptions/${created.id}`;
    expect((await t.http.patch(path, { token: tenant.token, json: {} })).body.data).toEqual(created);
    expect(
      (
        await t.http.patch(path, {
          token: tenant.token,
          json: { eventTypes: created.eventTypes, isActive: true, signingVersion: 'v1' },
        })
      ).body.data,
    ).toEqual(created);
  });

  it('deactivates and reactivates', async () => {
    const tenant = await tenantWithToken(t);
    const created = (await create(tenant.token)).body.data;
    const path = `/api/v1/webhook-subscriptions/${created.id}`;
    expect((await t.http.patch(path, { token: tenant.token, json: { isActive: false } })).body.data.isActive).toBe(
      false,
    );
    expect((await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token })).body.data[0].isActive).toBe(
      false,
    );
    expect((await t.http.patch(path, { token: tenant.token, json: { isActive: true } })).body.data.isActive).toBe(true);
  });

  it('upgrades a legacy subscription to v1 with an explicit secret', async () => {
    const tenant = await tenantWithToken(t);
    const legacy = await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`, {
      targetUrl: 'https://hooks.example.com/legacy',
      eventTypes: ['ticket.created'],
      description: 'carried over',
    });
    expect(legacy.status).toBe(201);
    expect(legacy.body.data).toMatchObject({
      signingVersion: 'legacy',
      isActive: true,
      tenantId: tenant.tenantId,
      description: 'carried over',
    });

    const listed = await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token });
    expect(listed.body.data).toEqual([legacy.body.data]);

    const path = `/api/v1/webhook-subscriptions/${legacy.body.data.id}`;
    const described = await t.http.patch(path, { token: tenant.token, json: { description: 'still legacy' } });
    expect(described.body.data.signingVersion).toBe('legacy');
    const upgraded = await t.http.patch(path, { token: tenant.token, json: { signingVersion: 'v1', secret: SECRET } });
    expect(upgraded.status).toBe(200);
    expect(upgraded.body.data).toMatchObject({ signingVersion: 'v1', description: 'still legacy' });
  });

  it('does not use Idempotency-Key or If-Match: both are ignored', async () => {
    const tenant = await tenantWithToken(t);
    const first = await create(tenant.token, {}, { 'idempotency-key': 'same-key' });
    const second = await create(tenant.token, {}, { 'idempotency-key': 'same-key' });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    const patched = await t.http.patch(`/api/v1/webhook-subscriptions/${first.body.data.id}`, {
      token: tenant.token,
      headers: { 'if-match': '"999"' },
      json: { description: 'whatever the ETag' },
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('etag')).toBeNull();
  });

  it("counts the secret's 16 characters as Unicode code points", async () => {
    const tenant = await tenantWithToken(t);
    // 15 ASCII characters and one astral symbol: 16 code points, 17 UTF-16 units.
    expect((await create(tenant.token, { secret: `${'x'.repeat(15)}🔑` })).status).toBe(201);
    // Secrets are used exactly as given: leading and trailing spaces are part of them.
    expect((await create(tenant.token, { secret: '   sixteen chars ' })).status).toBe(201);
  });

  it('shows the operator each subscription with its delivery health', async () => {
    const tenant = await tenantWithToken(t);
    const created = (await create(tenant.token)).body.data;
    const response = await admin(t, 'GET', `/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([
      {
        ...created,
        health: {
          consecutiveFailures: 0,
          failingSince: null,
          lastSuccessAt: null,
          lastFailureAt: null,
          lastError: null,
          deactivatedReason: null,
          last24Hours: { succeeded: 0, failed: 0, pending: 0, successRate: null },
        },
      },
    ]);
    expect(response.text).not.toContain(SECRET);
  });
});
