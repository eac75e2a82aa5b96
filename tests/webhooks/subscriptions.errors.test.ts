/** Webhook subscriptions, refusals: validation, access, versions, DNS outages and the signing-version race. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsFailure, type Resolver } from '../../src/modules/outbox/resolvers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';

/**
 * DNS the tests steer: every name is public; `slow.example` waits for a gate; `flaky.example` fails
 * temporarily while `dnsDown`. `asked` lists the names looked up.
 */
let dnsDown = false;
let gate: { entered: () => void; release: Promise<void> } | undefined;
const asked: string[] = [];
const resolver: Resolver = async (hostname) => {
  asked.push(hostname);
  if (hostname === 'slow.example' && gate) {
    const current = gate;
    current.entered();
    await current.release;
  }
  if (hostname === 'flaky.example' && dnsDown) throw new DnsFailure(false, 'SERVFAIL');
  return ['93.184.216.34'];
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ resolver });
});
afterAll(async () => t?.close());

const VALID = { targetUrl: 'https://hooks.example.com/in', eventTypes: ['ticket.created'], secret: 'sixteen chars ok' };

const create = (token: string, json: unknown) => t.http.post('/api/v1/webhook-subscriptions', { token, json });
const patch = (token: string, id: string, json: unknown) =>
  t.http.patch(`/api/v1/webhook-subscriptions/${id}`, { token, json });

function expectInvalid(response: { status: number; body: any }, fields: Record<string, RegExp>) {
  expect(response.status).toBe(422);
  expect(response.body.type).toMatch(/validation-error$/);
  expect(Object.keys(response.body.errors).sort()).toEqual(Object.keys(fields).sort());
  for (const [field, message] of Object.entries(fields)) expect(response.body.errors[field].join(' ')).toMatch(message);
}

describe('webhook subscription errors', () => {
  it.each([
    ['no body members', {}, { targetUrl: /required/, eventTypes: /required/, secret: /required/ }],
    ['an empty eventTypes', { ...VALID, eventTypes: [] }, { eventTypes: /empty/ }],
    [
      'a repeated event type',
      { ...VALID, eventTypes: ['ticket.created', 'ticket.created'] },
      { eventTypes: /duplicates/ },
    ],
    ['an unknown event type', { ...VALID, eventTypes: ['ticket.deleted'] }, { 'eventTypes[0]': /ticket\.created/ }],
    ['a 15-character secret', { ...VALID, secret: 'x'.repeat(15) }, { secret: /at least 16/ }],
    [
      'a secret of 15 code points in 16 UTF-16 units',
      { ...VALID, secret: `${'x'.repeat(14)}🔑` },
      { secret: /at least 16/ },
    ],
    ['a secret with an unpaired surrogate', { ...VALID, secret: `${'x'.repeat(16)}\ud800` }, { secret: /Unicode/ }],
    ['a null targetUrl', { ...VALID, targetUrl: null }, { targetUrl: /string/ }],
    ['signingVersion legacy', { ...VALID, signingVersion: 'legacy' }, { signingVersion: /"v1"/ }],
    ['isActive (not a create field)', { ...VALID, isActive: false }, { isActive: /not a known field/ }],
    [
      'read-only members',
      { ...VALID, id: 'whsub_x', tenantId: 'tnt_x', createdAt: '2026-01-01T00:00:00Z' },
      { id: /read-only/, tenantId: /read-only/, createdAt: /read-only/ },
    ],
  ])('refuses a create with %s', async (_name, body, fields) => {
    const tenant = await tenantWithToken(t);
    expectInvalid(await create(tenant.token, body), fields);
  });

  it('refuses a downgrade and an upgrade without a secret', async () => {
    const tenant = await tenantWithToken(t);
    const v1 = (await create(tenant.token, VALID)).body.data;
    expectInvalid(await patch(tenant.token, v1.id, { signingVersion: 'legacy' }), { signingVersion: /downgrade/ });

    const legacy = (
      await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`, {
        targetUrl: VALID.targetUrl,
        eventTypes: ['ticket.created'],
      })
    ).body.data;
    expectInvalid(await patch(tenant.token, legacy.id, { signingVersion: 'v1' }), { secret: /required to upgrade/ });
    expectInvalid(await patch(tenant.token, legacy.id, { signingVersion: 'v1', secret: 'short' }), {
      secret: /at least 16/,
    });
    const list = await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token });
    expect(list.body.data.map((subscription: any) => subscription.signingVersion)).toEqual(['v1', 'legacy']);
  });

  it('refuses patch bodies with bad members', async () => {
    const tenant = await tenantWithToken(t);
    const id = (await create(tenant.token, VALID)).body.data.id;
    expectInvalid(await patch(tenant.token, id, { eventTypes: [] }), { eventTypes: /empty/ });
    expectInvalid(await patch(tenant.token, id, { isActive: 'yes' }), { isActive: /boolean/ });
    expectInvalid(await patch(tenant.token, id, { signingVersion: 'v2' }), {
      signingVersion: /one of|"legacy" or "v1"/,
    });
    expectInvalid(await patch(tenant.token, id, { targetUrl: 'http://hooks.example.com/' }), { targetUrl: /https/ });
    expectInvalid(await patch(tenant.token, id, { secret: 'x'.repeat(513) }), { secret: /at most 512/ });
  });

  it.each([
    ['a leading space', ' https://1.1.1.1/h', 'U+0020 at character 1'],
    ['a trailing tab', 'https://1.1.1.1/h\t', 'U+0009 at character 18'],
    ['a line feed inside', 'https://hooks.example.com/i\nn', 'U+000A at character 28'],
  ])(
    'refuses a targetUrl with %s on create and patch, as it refuses one that is not a URL',
    async (_name, targetUrl, where) => {
      const tenant = await tenantWithToken(t);
      const notAUrl = await create(tenant.token, { ...VALID, targetUrl: 'hooks.example.com/in' });
      expectInvalid(notAUrl, { targetUrl: /^must be an absolute https URL$/ });
      const id = (await create(tenant.token, VALID)).body.data.id;
      const message = `must not contain white space or control characters (${where})`;
      for (const response of [
        await create(tenant.token, { ...VALID, targetUrl }),
        await patch(tenant.token, id, { targetUrl }),
      ]) {
        expectInvalid(response, { targetUrl: /white space or control/ });
        expect(response.body.errors.targetUrl).toEqual([message]);
        expect(response.body.detail).toBe(`The targetUrl is not an allowed webhook destination: ${message}.`);
        expect(Object.keys(response.body).sort()).toEqual(Object.keys(notAUrl.body).sort());
      }
      const list = await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token });
      expect(list.body.data.map((subscription: any) => subscription.targetUrl)).toEqual([VALID.targetUrl]);
    },
  );

  it('refuses a host name that cannot be a DNS name with 422 before any lookup, naming it by the rule (described)', async () => {
    const tenant = await tenantWithToken(t);
    const host = `${'a.'.repeat(130)}com`;
    const response = await create(tenant.token, { ...VALID, targetUrl: `https://${host}/` });
    expectInvalid(response, { targetUrl: /^the URL's host is not a DNS name: 263 characters, more than the 253/ });
    expect(response.body.detail).toMatch(/^The targetUrl is not an allowed webhook destination: the URL's host is not/);
    expect(response.text).not.toContain(host);
    const id = (await create(tenant.token, VALID)).body.data.id;
    const label = `${'b'.repeat(64)}.example.com`;
    expectInvalid(await patch(tenant.token, id, { targetUrl: `https://${label}/` }), {
      targetUrl: /a label of 64 characters, more than the 63/,
    });
    expect(asked.filter((name) => name === host || name === label)).toEqual([]);
  });

  it("answers 404 for an unknown subscription or another tenant's", async () => {
    const owner = await tenantWithToken(t);
    const stranger = await tenantWithToken(t);
    const id = (await create(owner.token, VALID)).body.data.id;
    for (const response of [
      await patch(stranger.token, id, { description: 'mine now' }),
      await patch(owner.token, 'whsub_unknown', { description: 'x' }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.type).toMatch(/not-found$/);
    }
    expect((await t.http.get('/api/v1/webhook-subscriptions', { token: stranger.token })).body.data).toEqual([]);
  });

  it('refuses creates and patches with 403 while the tenant has no webhook access; listing still works', async () => {
    const tenant = await tenantWithToken(t);
    const id = (await create(tenant.token, VALID)).body.data.id;
    await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { webhookAccess: false });
    for (const response of [await create(tenant.token, VALID), await patch(tenant.token, id, { description: 'x' })]) {
      expect(response.status).toBe(403);
      expect(response.body.type).toMatch(/forbidden$/);
      expect(response.body.detail).toMatch(/[Ww]ebhook access/);
    }
    expect((await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token })).status).toBe(200);
  });

  it('lets a tenant without webhook access switch a subscription off (ticket.created still goes to it), not on', async () => {
    const tenant = await tenantWithToken(t);
    const id = (await create(tenant.token, VALID)).body.data.id;
    await admin(t, 'PATCH', `/admin/v1/tenants/${tenant.tenantId}`, { webhookAccess: false });
    const off = await patch(tenant.token, id, { isActive: false });
    expect(off.status, off.text).toBe(200);
    expect(off.body.data.isActive).toBe(false);
    // Anything more than switching off still needs the access.
    expect((await patch(tenant.token, id, { isActive: true })).status).toBe(403);
    expect((await patch(tenant.token, id, { isActive: false, description: 'x' })).status).toBe(403);
  });

  it('requires webhooks:read to list and webhooks:write to create and patch', async () => {
    const reader = await tenantWithToken(t, { scope: 'webhooks:read' });
    const writer = await tenantWithToken(t, { scope: 'webhooks:write' });
    expect((await create(reader.token, VALID)).status).toBe(403);
    expect((await patch(reader.token, 'whsub_x', { description: 'x' })).status).toBe(403);
    expect((await t.http.get('/api/v1/webhook-subscriptions', { token: writer.token })).status).toBe(403);
    expect((await t.http.get('/api/v1/webhook-subscriptions', { token: reader.token })).status).toBe(200);
    expect((await t.http.get('/api/v1/webhook-subscriptions')).status).toBe(401);
    expect((await t.http.post('/api/v1/webhook-subscriptions', { json: VALID })).status).toBe(401);
  });

  it('refuses unknown query parameters on the list', async () => {
    const tenant = await tenantWithToken(t);
    const response = await t.http.get('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      query: { 'page[size]': 10 },
    });
    expectInvalid(response, { 'page[size]': /not a known field/ });
  });

  it('answers 503 when DNS fails temporarily, on create and on patch; a deactivation still goes through', async () => {
    const tenant = await tenantWithToken(t);
    const id = (await create(tenant.token, { ...VALID, targetUrl: 'https://flaky.example/in' })).body.data.id;
    dnsDown = true;
    try {
      for (const response of [
        await create(tenant.token, { ...VALID, targetUrl: 'https://flaky.example/in' }),
        await patch(tenant.token, id, { description: 'x' }),
      ]) {
        expect(response.status).toBe(503);
        expect(response.body.type).toMatch(/service-unavailable$/);
      }
      const deactivated = await patch(tenant.token, id, { isActive: false });
      expect(deactivated.status).toBe(200);
      expect(deactivated.body.data.isActive).toBe(false);
      expect((await patch(tenant.token, id, { isActive: true })).status).toBe(503);
    } finally {
      dnsDown = false;
    }
  });

  it('re-checks the destination on every patch, also for metadata and secret changes', async () => {
    const tenant = await tenantWithToken(t);
    const id = (await create(tenant.token, { ...VALID, targetUrl: 'https://flaky.example/in' })).body.data.id;
    dnsDown = true;
    try {
      expect((await patch(tenant.token, id, { secret: 'a rotated secret, 16+' })).status).toBe(503);
      expect((await patch(tenant.token, id, { eventTypes: ['job.completed'] })).status).toBe(503);
    } finally {
      dnsDown = false;
    }
  });

  it('answers 409 to a stale update racing a signing-version change', async () => {
    const tenant = await tenantWithToken(t);
    const legacy = (
      await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`, {
        targetUrl: VALID.targetUrl,
        eventTypes: ['ticket.created'],
      })
    ).body.data;

    // The stale update reads the legacy subscription, then waits in its DNS check of the new target...
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    gate = { entered, release: new Promise<void>((resolve) => (release = resolve)) };
    const stale = patch(tenant.token, legacy.id, { targetUrl: 'https://slow.example/in', description: 'stale' });
    await inside;
    gate = undefined;
    // ...while another request upgrades it to v1.
    const upgrade = await patch(tenant.token, legacy.id, { signingVersion: 'v1', secret: 'the upgrade secret!' });
    expect(upgrade.status).toBe(200);
    release();

    const response = await stale;
    expect(response.status).toBe(409);
    expect(response.body.type).toMatch(/signing-version-conflict$/);
    expect(response.body.type).toMatch(/version-conflict$/);
    const [current] = (await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token })).body.data;
    expect(current).toMatchObject({ signingVersion: 'v1', targetUrl: VALID.targetUrl, description: null });
  });
});
