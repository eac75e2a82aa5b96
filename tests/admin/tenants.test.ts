import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid, expectOAuthError, expectProblem } from '../helpers/problems.js';
import { admin, createTenant, tokenFor } from '../helpers/tenants.js';

const ALL = ['sites:read', 'sites:write', 'site-visits:read', 'site-visits:write', 'webhooks:read', 'webhooks:write'];
const clock = new ManualClock(new Date('2026-05-01T12:00:00.000Z'));
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => t?.close());

const tokenBody = (clientId: string, clientSecret: string) => ({
  json: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
});

describe('POST /admin/v1/tenants', () => {
  it('creates a tenant with the defaults (all six scopes, apiEnabled and webhookAccess true) and its first pair', async () => {
    const response = await admin(t, 'POST', '/admin/v1/tenants', { name: 'Acme Retail' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(/^tnt_[0-9a-z]{26}$/),
        tenantId: expect.stringMatching(/^tnt_[0-9a-z]{26}$/),
        name: 'Acme Retail',
        scopes: ALL,
        apiEnabled: true,
        webhookAccess: true,
        maxActiveSubscriptions: 16,
        storageLimitMiB: 10240,
        storageUsedBytes: 0,
        createdAt: '2026-05-01T12:00:00.000Z',
        updatedAt: '2026-05-01T12:00:00.000Z',
        credentials: {
          client_id: expect.stringMatching(/^cli_[0-9a-z]{26}$/),
          client_secret: expect.stringMatching(/^secret_[0-9a-z]{52}$/),
        },
      },
    });
    // data.id as every resource's answer has it; tenantId (deprecated) the same value, for older clients.
    expect(response.body.data.tenantId).toBe(response.body.data.id);
    const { client_id, client_secret } = response.body.data.credentials;
    expect((await t.http.post('/api/v1/oauth/token', tokenBody(client_id, client_secret))).status).toBe(200);
  });

  it('takes scopes (served in canonical order) and flags', async () => {
    const response = await admin(t, 'POST', '/admin/v1/tenants', {
      name: 'Narrow',
      scopes: ['webhooks:read', 'sites:read'],
      apiEnabled: false,
      webhookAccess: false,
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      scopes: ['sites:read', 'webhooks:read'],
      apiEnabled: false,
      webhookAccess: false,
    });
  });

  it('takes a limit on active webhook subscriptions (1 to 1000)', async () => {
    for (const limit of [1, 3, 1000]) {
      const response = await admin(t, 'POST', '/admin/v1/tenants', { name: 'Capped', maxActiveSubscriptions: limit });
      expect(response.status, response.text).toBe(201);
      expect(response.body.data.maxActiveSubscriptions).toBe(limit);
    }
  });

  it('accepts an empty scope list', async () => {
    const response = await admin(t, 'POST', '/admin/v1/tenants', { name: 'No scopes', scopes: [] });
    expect(response.status).toBe(201);
    expect(response.body.data.scopes).toEqual([]);
  });

  it.each([
    ['no name', {}, ['name']],
    ['empty name', { name: '' }, ['name']],
    ['name too long', { name: 'n'.repeat(201) }, ['name']],
    ['name not a string', { name: 42 }, ['name']],
    ['unknown field', { name: 'x', plan: 'gold' }, ['plan']],
    ['read-only field', { name: 'x', tenantId: 'tnt_mine' }, ['tenantId']],
    ['read-only id', { name: 'x', id: 'tnt_mine' }, ['id']],
    ['credentials', { name: 'x', credentials: { client_id: 'cli_mine' } }, ['credentials']],
    ['scopes not an array', { name: 'x', scopes: 'sites:read' }, ['scopes']],
    ['duplicate scopes', { name: 'x', scopes: ['sites:read', 'sites:read'] }, ['scopes']],
    ['flags not booleans', { name: 'x', apiEnabled: 'true', webhookAccess: 1 }, ['apiEnabled', 'webhookAccess']],
    ['subscription limit 0', { name: 'x', maxActiveSubscriptions: 0 }, ['maxActiveSubscriptions']],
    ['subscription limit above 1000', { name: 'x', maxActiveSubscriptions: 1001 }, ['maxActiveSubscriptions']],
    ['subscription limit not an integer', { name: 'x', maxActiveSubscriptions: 2.5 }, ['maxActiveSubscriptions']],
    ['subscription limit as text', { name: 'x', maxActiveSubscriptions: '16' }, ['maxActiveSubscriptions']],
    ['subscription limit null', { name: 'x', maxActiveSubscriptions: null }, ['maxActiveSubscriptions']],
    ['storage limit below one file', { name: 'x', storageLimitMiB: 9 }, ['storageLimitMiB']],
    ['storage limit above 10 TiB', { name: 'x', storageLimitMiB: 10_485_761 }, ['storageLimitMiB']],
    ['storage limit not an integer', { name: 'x', storageLimitMiB: 10.5 }, ['storageLimitMiB']],
  ])('%s is 422', async (_label, body, fields) => {
    expectInvalid(await admin(t, 'POST', '/admin/v1/tenants', body), fields);
  });

  it('an unknown scope is 422 naming the entry', async () => {
    const errors = expectProblem(
      await admin(t, 'POST', '/admin/v1/tenants', { name: 'x', scopes: ['sites:read', 'sites:delete'] }),
      422,
      'validation-error',
    );
    expect(Object.keys(errors)).toEqual(['scopes[1]']);
  });
});

describe('GET /admin/v1/tenants and /admin/v1/tenants/{tenantId}', () => {
  it('reads a tenant without its credentials', async () => {
    const tenant = await createTenant(t, { name: 'Readable' });
    const response = await admin(t, 'GET', `/admin/v1/tenants/${tenant.tenantId}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        id: tenant.tenantId,
        tenantId: tenant.tenantId,
        name: 'Readable',
        scopes: ALL,
        apiEnabled: true,
        webhookAccess: true,
        maxActiveSubscriptions: 16,
        storageLimitMiB: 10240,
        storageUsedBytes: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
  });

  it('lists tenants, never with secrets', async () => {
    const a = await createTenant(t);
    const b = await createTenant(t);
    const response = await admin(t, 'GET', '/admin/v1/tenants');
    expect(response.status).toBe(200);
    const ids = response.body.data.map((tenant: { tenantId: string }) => tenant.tenantId);
    expect(ids).toEqual(expect.arrayContaining([a.tenantId, b.tenantId]));
    expect(ids.indexOf(a.tenantId)).toBeLessThan(ids.indexOf(b.tenantId));
    expect(response.text).not.toContain('secret');
    expect(response.text).not.toContain(a.clientSecret);
  });

  it('an unknown tenant is 404', async () => {
    expectProblem(await admin(t, 'GET', '/admin/v1/tenants/tnt_unknown'), 404, 'not-found');
  });
});

describe('PATCH /admin/v1/tenants/{tenantId}', () => {
  it('changes only the supplied members', async () => {
    const tenant = await createTenant(t, { name: 'Before' });
    clock.advance(60_000);
    const renamed = await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { name: 'After' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      name: 'After',
      scopes: ALL,
      apiEnabled: true,
      webhookAccess: true,
      updatedAt: clock.now().toISOString(),
    });
    expect(renamed.body.data.credentials).toBeUndefined();
    const flags = await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, {
      apiEnabled: false,
      webhookAccess: false,
      scopes: ['sites:write', 'sites:read'],
    });
    expect(flags.body.data).toMatchObject({
      name: 'After',
      apiEnabled: false,
      webhookAccess: false,
      scopes: ['sites:read', 'sites:write'],
    });
    expect((await admin(t, 'GET', `/admin/v1/tenants/${tenant.tenantId}`)).body.data).toEqual(flags.body.data);
    expect((await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, {})).status).toBe(200);
  });

  it('changes the limit on active webhook subscriptions and keeps it', async () => {
    const tenant = await createTenant(t);
    const changed = await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { maxActiveSubscriptions: 40 });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ maxActiveSubscriptions: 40, scopes: ALL, webhookAccess: true });
    const renamed = await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { name: 'Renamed' });
    expect(renamed.body.data.maxActiveSubscriptions).toBe(40);
    const listed = await admin(t, 'GET', '/admin/v1/tenants');
    const entry = listed.body.data.find((row: { tenantId: string }) => row.tenantId === tenant.tenantId);
    expect(entry.maxActiveSubscriptions).toBe(40);
  });

  it('narrowed scopes bound the token endpoint', async () => {
    const tenant = await createTenant(t);
    await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { scopes: ['sites:read'] });
    expectOAuthError(
      await t.http.post('/api/v1/oauth/token', {
        json: { ...tokenBody(tenant.clientId, tenant.clientSecret).json, scope: 'sites:write' },
      }),
      400,
      'invalid_scope',
    );
    const granted = await t.http.post('/api/v1/oauth/token', tokenBody(tenant.clientId, tenant.clientSecret));
    expect(granted.body.scope).toBe('sites:read');
  });

  it.each([
    ['unknown field', { color: 'blue' }, ['color']],
    ['read-only field', { tenantId: 'tnt_x', createdAt: '2026-01-01T00:00:00Z' }, ['tenantId', 'createdAt']],
    ['bad scopes', { scopes: 'all' }, ['scopes']],
    ['null name', { name: null }, ['name']],
    ['non-boolean flag', { apiEnabled: 'no' }, ['apiEnabled']],
    ['subscription limit 0', { maxActiveSubscriptions: 0 }, ['maxActiveSubscriptions']],
    ['subscription limit negative', { maxActiveSubscriptions: -1 }, ['maxActiveSubscriptions']],
    ['subscription limit not an integer', { maxActiveSubscriptions: 1.5 }, ['maxActiveSubscriptions']],
  ])('%s is 422', async (_label, body, fields) => {
    const tenant = await createTenant(t);
    expectInvalid(await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, body), fields);
  });

  it('an unknown scope is 422', async () => {
    const tenant = await createTenant(t);
    expectProblem(
      await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { scopes: ['admin'] }),
      422,
      'validation-error',
    );
  });

  it('an unknown tenant is 404', async () => {
    expectProblem(await admin(t, 'PATCH', '/admin/v1/tenants/tnt_unknown', { name: 'x' }), 404, 'not-found');
  });
});

describe('credential pairs', () => {
  it('POST adds a pair that works while earlier pairs keep working; GET lists them without secrets', async () => {
    const tenant = await createTenant(t);
    const added = await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/credentials`);
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      data: { client_id: expect.stringMatching(/^cli_/), client_secret: expect.stringMatching(/^secret_/) },
    });
    expect(added.body.data.client_id).not.toBe(tenant.clientId);
    const second = { clientId: added.body.data.client_id, clientSecret: added.body.data.client_secret };
    const token = await tokenFor(t, second);
    expect((await t.http.get('/api/v1/sites', { token })).status).toBe(200);
    expect(await tokenFor(t, tenant)).toEqual(expect.any(String));

    const listed = await admin(t, 'GET', `/admin/v1/tenants/${tenant.tenantId}/credentials`);
    expect(listed.body.data).toHaveLength(2);
    expect(listed.body.data).toEqual(
      expect.arrayContaining([
        { client_id: tenant.clientId, createdAt: expect.any(String), revokedAt: null },
        { client_id: second.clientId, createdAt: expect.any(String), revokedAt: null },
      ]),
    );
    expect(listed.text).not.toContain('secret_');
  });

  it('DELETE revokes a pair: 204, the token endpoint refuses it, the list shows it revoked, a second DELETE is 404', async () => {
    const tenant = await createTenant(t);
    const revoked = await admin(t, 'DELETE', `/admin/v1/tenants/${tenant.tenantId}/credentials/${tenant.clientId}`);
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    expectOAuthError(
      await t.http.post('/api/v1/oauth/token', tokenBody(tenant.clientId, tenant.clientSecret)),
      401,
      'invalid_client',
    );
    const listed = await admin(t, 'GET', `/admin/v1/tenants/${tenant.tenantId}/credentials`);
    expect(listed.body.data).toEqual([
      { client_id: tenant.clientId, createdAt: expect.any(String), revokedAt: clock.now().toISOString() },
    ]);
    expectProblem(
      await admin(t, 'DELETE', `/admin/v1/tenants/${tenant.tenantId}/credentials/${tenant.clientId}`),
      404,
      'not-found',
    );
  });

  it('a pair is only revoked through its own tenant', async () => {
    const owner = await createTenant(t);
    const other = await createTenant(t);
    expectProblem(
      await admin(t, 'DELETE', `/admin/v1/tenants/${other.tenantId}/credentials/${owner.clientId}`),
      404,
      'not-found',
    );
    expect((await t.http.post('/api/v1/oauth/token', tokenBody(owner.clientId, owner.clientSecret))).status).toBe(200);
  });

  it('unknown tenants and pairs are 404', async () => {
    const tenant = await createTenant(t);
    expectProblem(
      await admin(t, 'DELETE', `/admin/v1/tenants/${tenant.tenantId}/credentials/cli_unknown`),
      404,
      'not-found',
    );
    expectProblem(await admin(t, 'POST', '/admin/v1/tenants/tnt_unknown/credentials'), 404, 'not-found');
    expectProblem(await admin(t, 'GET', '/admin/v1/tenants/tnt_unknown/credentials'), 404, 'not-found');
  });
});
