/** Webhook secrets: write-only, never logged, sealed at rest and bound to their subscription. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/modules/outbox/resolvers.js';
import { unsealSecret } from '../../src/modules/outbox/signing.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin, tenantWithToken } from '../helpers/tenants.js';

const resolver: Resolver = async () => ['93.184.216.34'];
const logLines: string[] = [];

let t: TestApp;
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(String(chunk));
      callback();
    },
  });
  t = await startTestApp({ resolver, logger: pino({ level: 'trace' }, sink) });
});
afterAll(async () => t?.close());

describe('webhook secrets', () => {
  it('never returns or logs the secret, on success or failure', async () => {
    const tenant = await tenantWithToken(t);
    const secret = 'never-show-me-4f1c9a7e-secret';
    const created = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: { targetUrl: 'https://hooks.example.com/in', eventTypes: ['ticket.created'], secret },
    });
    expect(created.status).toBe(201);
    const refused = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: { targetUrl: 'https://127.0.0.1/in', eventTypes: ['ticket.created'], secret: `${secret}-2` },
    });
    expect(refused.status).toBe(422);
    const invalid = await t.http.post('/api/v1/webhook-subscriptions', {
      token: tenant.token,
      json: { eventTypes: 'all', secret: `${secret}-3` },
    });
    expect(invalid.status).toBe(422);
    const rotated = await t.http.patch(`/api/v1/webhook-subscriptions/${created.body.data.id}`, {
      token: tenant.token,
      json: { secret: `${secret}-4` },
    });
    const listed = await t.http.get('/api/v1/webhook-subscriptions', { token: tenant.token });
    const operator = await admin(t, 'GET', `/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`);

    for (const response of [created, refused, invalid, rotated, listed, operator])
      expect(response.text).not.toContain(secret);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toContain(secret);
  });

  it('stores the secret sealed with AES-256-GCM, bound to its subscription', async () => {
    const tenant = await tenantWithToken(t);
    const ids: string[] = [];
    for (const secret of ['first secret, sealed at rest', 'second secret, sealed at rest']) {
      const created = await t.http.post('/api/v1/webhook-subscriptions', {
        token: tenant.token,
        json: { targetUrl: 'https://hooks.example.com/in', eventTypes: ['ticket.created'], secret },
      });
      ids.push(created.body.data.id);
    }
    const rows = await t.database.db
      .selectFrom('webhook_subscriptions')
      .select(['id', 'secret_sealed'])
      .where('id', 'in', ids)
      .orderBy('seq')
      .execute();
    const [first, second] = rows as [(typeof rows)[0], (typeof rows)[0]];
    expect(first.secret_sealed).not.toContain('first secret');
    expect(Buffer.from(first.secret_sealed!.split('.')[1]!, 'base64url').toString('utf8')).not.toContain(
      'first secret',
    );
    expect(unsealSecret(t.keys.webhookEncryptionKey, first.id, first.secret_sealed!)).toBe(
      'first secret, sealed at rest',
    );
    // A ciphertext copied to another subscription does not open there.
    expect(unsealSecret(t.keys.webhookEncryptionKey, second.id, first.secret_sealed!)).toBeUndefined();
    // Nor under another key.
    expect(unsealSecret(Buffer.alloc(32, 7), first.id, first.secret_sealed!)).toBeUndefined();
    // Sealing is randomised: the same secret never gives the same ciphertext twice.
    expect(first.secret_sealed).not.toBe(second.secret_sealed);
  });

  it('keeps legacy subscriptions without any client secret', async () => {
    const tenant = await tenantWithToken(t);
    const legacy = await admin(t, 'POST', `/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`, {
      targetUrl: 'https://hooks.example.com/legacy',
      eventTypes: ['ticket.created'],
    });
    const row = await t.database.db
      .selectFrom('webhook_subscriptions')
      .select('secret_sealed')
      .where('id', '=', legacy.body.data.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sealed).toBeNull();
    expect(
      (
        await admin(t, 'POST', '/admin/v1/tenants/tnt_unknown/webhook-subscriptions', {
          targetUrl: 'https://hooks.example.com/x',
          eventTypes: ['ticket.created'],
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await t.http.post(`/admin/v1/tenants/${tenant.tenantId}/webhook-subscriptions`, {
          json: { targetUrl: 'https://hooks.example.com/x', eventTypes: ['ticket.created'] },
        })
      ).status,
    ).toBe(401);
  });
});
