/**
 * JWT attacks: each forged, stale, foreign or malformed bearer token is presented to every secured
 * operation of the client API (from its OpenAPI document). Every answer is 401 `unauthorized` with a
 * Bearer challenge, none is a 5xx, and the process opens no connection beyond the app and PostgreSQL
 * (a jku/x5u/x5c header names a loopback canary that counts any fetch).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { accessClaims, b64, forgeJwt } from '../helpers/jwt-forge.js';
import { tenantWithToken, tokenFor } from '../helpers/tenants.js';
import { reportFigure } from './lib/figures.js';
import { clientOperations, fillPath } from './lib/operations.js';
import { countOutbound, type OutboundCounter } from './lib/outbound.js';

let t: TestApp;
let production: TestApp;
let tenant: Awaited<ReturnType<typeof tenantWithToken>>;
let canary: http.Server;
let canaryHits = 0;
let canaryUrl: string;
let outbound: OutboundCounter;

beforeAll(async () => {
  canary = http.createServer((_request, response) => {
    canaryHits++;
    response.end('{}');
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  canaryUrl = `http://127.0.0.1:${(canary.address() as { port: number }).port}`;
  t = await startTestApp();
  // The other environment: production with keys of its own, on the same data.
  const productionConfig = loadConfig({
    ENVIRONMENT: 'production',
    TOKEN_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    APP_SECRET: randomBytes(32).toString('base64'),
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_TOKEN: `adm_${randomBytes(16).toString('hex')}`,
  });
  production = await startTestApp({
    config: { ...productionConfig, logLevel: 'silent', rateLimitPerMinute: 1_000_000 },
    database: t.database,
  });
  tenant = await tenantWithToken(t);
  const databasePort = Number(new URL(t.database.pool!.options.connectionString!).port || 5432);
  const appPorts = [t.baseUrl, production.baseUrl].map((url) => Number(new URL(url).port));
  outbound = countOutbound(() => [databasePort, ...appPorts]);
});
afterAll(async () => {
  outbound?.stop();
  await production?.close();
  await t?.close();
  await new Promise((resolve) => canary?.close(resolve));
});

it('every attack on every secured operation is 401, never 5xx, with no outbound fetch', async () => {
  const now = Math.floor(Date.now() / 1000);
  const claims = (overrides: Record<string, unknown> = {}) =>
    accessClaims(tenant, now, { scope: tenant.scopes.join(' '), ...overrides });
  const serverKey = t.keys.tokenPrivateKey;
  const attacker = generateKeyPairSync('ed25519');
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = t.keys.tokenPublicKey.export({ format: 'jwk' });
  const pem = t.keys.tokenPublicKey.export({ format: 'pem', type: 'spki' }).toString();
  const genuine = tenant.token;
  const productionToken = await tokenFor(production, tenant);

  const attacks: Array<[string, string]> = [
    ['alg none, no signature', forgeJwt(claims(), { header: { alg: 'none', typ: 'at+jwt' } })],
    ['alg None with a signature', `${forgeJwt(claims(), { header: { alg: 'None', typ: 'at+jwt' } })}${b64('sig')}`],
    ['HS256 keyed with our public key (PEM)', forgeJwt(claims(), { secret: pem })],
    [
      'HS256 keyed with our raw Ed25519 key (HS/EdDSA confusion)',
      forgeJwt(claims(), { secret: Buffer.from(jwk.x!, 'base64url') }),
    ],
    [
      'HS256 keyed with our JWK, naming our kid',
      forgeJwt(claims(), {
        secret: JSON.stringify(jwk),
        header: { alg: 'HS256', typ: 'at+jwt', kid: t.keys.tokenKeyId },
      }),
    ],
    [
      'RS256 label over an HMAC of our key (HS/RS confusion)',
      forgeJwt(claims(), { secret: pem, header: { alg: 'RS256', typ: 'at+jwt' } }),
    ],
    [
      'RS256 label over our EdDSA signature',
      forgeJwt(claims(), { key: serverKey, header: { alg: 'RS256', typ: 'at+jwt' } }),
    ],
    [
      'expired an hour ago',
      forgeJwt(claims({ iat: now - 7200, nbf: now - 7200, exp: now - 3600 }), { key: serverKey }),
    ],
    ['not valid for another hour', forgeJwt(claims({ nbf: now + 3600, exp: now + 7200 }), { key: serverKey })],
    ['wrong issuer', forgeJwt(claims({ iss: 'https://accounts.example.com' }), { key: serverKey })],
    ['wrong audience', forgeJwt(claims({ aud: 'another-api' }), { key: serverKey })],
    ['typ JWT instead of at+jwt', forgeJwt(claims(), { key: serverKey, header: { alg: 'EdDSA', typ: 'JWT' } })],
    ["the production environment's genuine token", productionToken],
    ['signed by an attacker key', forgeJwt(claims(), { key: attacker.privateKey })],
    [
      'kid path traversal',
      forgeJwt(claims(), {
        key: attacker.privateKey,
        header: { alg: 'EdDSA', typ: 'at+jwt', kid: '../../../../../dev/null' },
      }),
    ],
    [
      'kid SQL injection',
      forgeJwt(claims(), {
        key: attacker.privateKey,
        header: { alg: 'EdDSA', typ: 'at+jwt', kid: "x' UNION SELECT 'secret' --" },
      }),
    ],
    [
      'embedded attacker jwk',
      forgeJwt(claims(), {
        key: attacker.privateKey,
        header: { alg: 'EdDSA', typ: 'at+jwt', jwk: attacker.publicKey.export({ format: 'jwk' }) },
      }),
    ],
    [
      'jku to a canary',
      forgeJwt(claims(), {
        key: attacker.privateKey,
        header: { alg: 'EdDSA', typ: 'at+jwt', jku: `${canaryUrl}/jwks.json`, kid: 'attacker' },
      }),
    ],
    [
      'x5u to a canary',
      forgeJwt(claims(), {
        key: attacker.privateKey,
        header: { alg: 'EdDSA', typ: 'at+jwt', x5u: `${canaryUrl}/cert.pem` },
      }),
    ],
    [
      'embedded x5c',
      forgeJwt(claims(), {
        key: attacker.privateKey,
        header: { alg: 'EdDSA', typ: 'at+jwt', x5c: [randomBytes(300).toString('base64')] },
      }),
    ],
    [
      'RS256 by an attacker with embedded jwk',
      forgeJwt(claims(), {
        key: rsa.privateKey,
        header: { alg: 'RS256', typ: 'at+jwt', jwk: rsa.publicKey.export({ format: 'jwk' }) },
      }),
    ],
    [
      'another tenant in the payload, original signature',
      `${genuine.split('.')[0]}.${b64(claims({ tid: 'tnt_other' }))}.${genuine.split('.')[2]}`,
    ],
    [
      'critical header extension',
      forgeJwt(claims(), { key: serverKey, header: { alg: 'EdDSA', typ: 'at+jwt', crit: ['exp'], exp: now } }),
    ],
    ['truncated signature', genuine.slice(0, -10)],
    ['two segments only', genuine.split('.').slice(0, 2).join('.')],
    ['oversized, validly signed', forgeJwt(claims({ padding: 'x'.repeat(6_000) }), { key: serverKey })],
    ['oversized garbage (12 KB)', `${b64('x'.repeat(4_000))}.${b64('y'.repeat(4_000))}.${b64('z')}`],
    ['non-base64url segments', `${genuine.split('.')[0]}.!!!.${genuine.split('.')[2]}`],
  ];
  expect(attacks.length).toBeGreaterThanOrEqual(20);

  const operations = clientOperations(t.app).filter((operation) => operation.secured);
  expect(operations.length).toBeGreaterThan(10);
  // The control: the genuine token passes the authentication of a read.
  expect((await t.http.get('/api/v1/sites', { token: genuine })).status).toBe(200);

  let answered = 0;
  let unauthorized = 0;
  let serverErrors = 0;
  const failures: string[] = [];
  for (const [name, token] of attacks) {
    for (const operation of operations) {
      const path = fillPath(operation.path, () => 'id_does_not_matter');
      const response = await t.http.request(operation.method, path, {
        token,
        ...(['POST', 'PATCH'].includes(operation.method) ? { json: {} } : {}),
      });
      answered++;
      if (response.status >= 500) serverErrors++;
      const ok =
        response.status === 401 &&
        /\/problems\/unauthorized$/.test(response.body?.type ?? '') &&
        /^Bearer /.test(response.headers.get('www-authenticate') ?? '');
      if (ok) unauthorized++;
      else
        failures.push(
          `${name} → ${operation.method} ${operation.path}: ${response.status} ${response.text.slice(0, 200)}`,
        );
    }
  }
  expect(failures).toEqual([]);
  expect(serverErrors).toBe(0);
  expect(canaryHits).toBe(0);
  expect(outbound.connections()).toEqual([]);
  reportFigure(
    'jwt',
    `${attacks.length} attacks × ${operations.length} secured operations: ${unauthorized}/${answered} 401, ${serverErrors} 5xx, ${outbound.connections().length} outbound connections, ${canaryHits} canary fetches`,
  );
});
