/**
 * Client secrets are stored as their SHA-256 (`sha256$…`): 256 random bits the service generated need no slow
 * KDF, whose scrypt took about 29 ms of libuv's shared thread pool per token request. A row of a deployment
 * started before still holds a scrypt hash: it is verified by scrypt once and rewritten. An unknown client id
 * is checked against a decoy, as a wrong secret is; a secret not of the generated shape is refused unchecked.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { LEGACY_SCRYPT_PAIR } from '../helpers/legacy-secrets.js';
import { expectOAuthError } from '../helpers/problems.js';
import { secretChecks } from '../helpers/secret-checks.js';
import { createTenant, type TestTenant } from '../helpers/tenants.js';

// Client secrets verified by the token endpoint, counted through the real function.
vi.mock('../../src/lib/secrets.js', async (importOriginal) =>
  (await import('../helpers/secret-checks.js')).countingSecrets(importOriginal),
);

const TOKEN = '/api/v1/oauth/token';
let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterAll(async () => t?.close());

const grant = (clientId: string, clientSecret: string) =>
  t.http.post(TOKEN, { json: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } });
const basicGrant = (clientId: string, clientSecret: string) =>
  t.http.post(TOKEN, {
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
  });
const storedHash = async (clientId: string) =>
  (
    await t.database.db
      .selectFrom('client_credentials')
      .select('secret_hash')
      .where('client_id', '=', clientId)
      .executeTakeFirstOrThrow()
  ).secret_hash;
const sha256Hash = (secret: string) => `sha256$${createHash('sha256').update(secret, 'utf8').digest('base64url')}`;
/** A secret of the generated shape that no client has. */
const shapedGuess = () => `secret_${'0123456789abcdefghjkmnpqrstvwxyz'.repeat(2).slice(0, 52)}`;

/** A pair of the tenant as a deployment started before stored it: the scrypt hash of a known secret. */
async function legacyPair(): Promise<string> {
  const clientId = newId('cli');
  await t.database.db
    .insertInto('client_credentials')
    .values({
      client_id: clientId,
      tenant_id: tenant.tenantId,
      secret_hash: LEGACY_SCRYPT_PAIR.hash,
      created_at: new Date(),
      revoked_at: null,
    })
    .execute();
  return clientId;
}

/** The answer without what differs between any two answers (the request's own id). */
function answer(response: TestResponse) {
  const { instance: _instance, ...body } = response.body as Record<string, unknown>;
  return { status: response.status, body, authenticate: response.headers.get('www-authenticate') };
}

async function checksDuring(request: () => Promise<TestResponse>): Promise<{ response: TestResponse; checks: number }> {
  const before = secretChecks.count;
  const response = await request();
  return { response, checks: secretChecks.count - before };
}

describe('client secrets stored as SHA-256', () => {
  it('a new pair is stored as the SHA-256 of its secret and issues tokens', async () => {
    expect(await storedHash(tenant.clientId)).toBe(sha256Hash(tenant.clientSecret));
    expect((await grant(tenant.clientId, tenant.clientSecret)).status).toBe(200);
    const added = await t.http.post(`/admin/v1/tenants/${tenant.tenantId}/credentials`, { token: t.adminToken });
    expect(added.status).toBe(201);
    const { client_id: clientId, client_secret: clientSecret } = added.body.data;
    expect(await storedHash(clientId)).toBe(sha256Hash(clientSecret));
    expect((await grant(clientId, clientSecret)).status).toBe(200);
  });

  it('a legacy scrypt row is verified by scrypt, then rewritten as SHA-256 and verified so', async () => {
    const clientId = await legacyPair();
    // A wrong secret leaves the row as it was.
    expectOAuthError(await grant(clientId, shapedGuess()), 401, 'invalid_client');
    expect(await storedHash(clientId)).toBe(LEGACY_SCRYPT_PAIR.hash);

    expect((await grant(clientId, LEGACY_SCRYPT_PAIR.secret)).status).toBe(200);
    expect(await storedHash(clientId)).toBe(sha256Hash(LEGACY_SCRYPT_PAIR.secret));
    expect((await grant(clientId, LEGACY_SCRYPT_PAIR.secret)).status).toBe(200);
    expectOAuthError(await grant(clientId, shapedGuess()), 401, 'invalid_client');
  });

  it("a legacy client's first token requests at once all succeed and leave the one new hash", async () => {
    const clientId = await legacyPair();
    const responses = await Promise.all(Array.from({ length: 6 }, () => grant(clientId, LEGACY_SCRYPT_PAIR.secret)));
    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(200));
    expect(await storedHash(clientId)).toBe(sha256Hash(LEGACY_SCRYPT_PAIR.secret));
    expect((await grant(clientId, LEGACY_SCRYPT_PAIR.secret)).status).toBe(200);
  });

  it('a revoked legacy pair is refused though its secret is right', async () => {
    const clientId = await legacyPair();
    const revoke = await t.http.delete(`/admin/v1/tenants/${tenant.tenantId}/credentials/${clientId}`, {
      token: t.adminToken,
    });
    expect(revoke.status).toBe(204);
    expectOAuthError(await grant(clientId, LEGACY_SCRYPT_PAIR.secret), 401, 'invalid_client');
    expect(await storedHash(clientId)).toBe(LEGACY_SCRYPT_PAIR.hash);
  });
});

describe('what a failed client authentication tells', () => {
  it('a wrong secret and an unknown client id are answered alike, each after one check of a secret', async () => {
    for (const send of [grant, basicGrant]) {
      const wrong = await checksDuring(() => send(tenant.clientId, shapedGuess()));
      const unknown = await checksDuring(() => send(newId('cli'), shapedGuess()));
      expectOAuthError(wrong.response, 401, 'invalid_client', 'unauthorized');
      expect(answer(unknown.response)).toEqual(answer(wrong.response));
      expect([wrong.checks, unknown.checks]).toEqual([1, 1]);
    }
  });

  it('a secret not of the generated shape is refused without a check, alike for a known and an unknown id', async () => {
    const body = tenant.clientSecret.slice('secret_'.length);
    const wrongShapes = [
      'wrong',
      tenant.clientSecret.slice(0, -1),
      `${tenant.clientSecret}0`,
      tenant.clientSecret.toUpperCase(),
      `secret_${body.slice(0, -1)}u`,
      `whsec_${body}`,
      `secret_${'é'.repeat(52)}`,
      'x'.repeat(10_000),
    ];
    const wrong = await checksDuring(() => grant(tenant.clientId, shapedGuess()));
    for (const secret of wrongShapes) {
      const known = await checksDuring(() => grant(tenant.clientId, secret));
      const unknown = await checksDuring(() => grant(newId('cli'), secret));
      expectOAuthError(known.response, 401, 'invalid_client', 'unauthorized');
      expect(answer(known.response), secret).toEqual(answer(wrong.response));
      expect(answer(unknown.response), secret).toEqual(answer(wrong.response));
      expect([known.checks, unknown.checks], secret).toEqual([0, 0]);
    }
    // Its own secret still works.
    expect((await grant(tenant.clientId, tenant.clientSecret)).status).toBe(200);
  });
});
