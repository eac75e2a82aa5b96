import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { Client } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { accessClaims, b64, forgeJwt } from '../helpers/jwt-forge.js';
import { expectProblem } from '../helpers/problems.js';
import { admin, siteBody, tenantWithToken, tokenFor } from '../helpers/tenants.js';

const SITES = '/api/v1/sites';
const start = new Date();
const clock = new ManualClock(start);

let t: TestApp;
let tenant: Awaited<ReturnType<typeof tenantWithToken>>;
beforeAll(async () => {
  t = await startTestApp({ clock });
  tenant = await tenantWithToken(t);
});
afterAll(async () => t?.close());
beforeEach(() => clock.set(start));

const seconds = () => Math.floor(clock.now().getTime() / 1000);
const claims = (overrides: Record<string, unknown> = {}) => accessClaims(tenant, seconds(), overrides);
const forge = (
  options: {
    header?: Record<string, unknown>;
    payload?: Record<string, unknown>;
    key?: KeyObject;
    secret?: Buffer | string;
  } = {},
) => forgeJwt(options.payload ?? claims(), options);

const serverKey = () => t.keys.tokenPrivateKey;
const attacker = generateKeyPairSync('ed25519');

async function call(authorization: string | undefined, method = 'GET'): Promise<TestResponse> {
  return t.http.request(method, SITES, {
    headers: authorization === undefined ? {} : { authorization },
    ...(method === 'POST' ? { json: siteBody() } : {}),
  });
}

function expectUnauthorized(response: TestResponse): void {
  expectProblem(response, 401, 'unauthorized');
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="site-services"/);
  expect(response.text).not.toMatch(/jose|JWS|JWT[A-Z]|stack|at .*\.js/);
}

describe('the forging helper (control)', () => {
  it('a token signed with the server key and valid claims is accepted', async () => {
    expect((await call(`Bearer ${forge({ key: serverKey() })}`)).status).toBe(200);
  });
});

describe('401 for a missing or malformed Authorization header', () => {
  it('no header: 401 asking for a token', async () => {
    const response = await call(undefined);
    expectUnauthorized(response);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="site-services"');
  });

  it.each([
    ['Basic scheme', () => `Basic ${Buffer.from(`${tenant.clientId}:${tenant.clientSecret}`).toString('base64')}`],
    ['Token scheme', () => `Token ${tenant.token}`],
    ['no scheme', () => tenant.token],
    ['scheme only', () => 'Bearer'],
    ['scheme and blanks', () => 'Bearer    '],
    ['two tokens', () => `Bearer ${tenant.token} ${tenant.token}`],
    ['empty', () => ''],
  ])('%s', async (_label, header) => {
    expectUnauthorized(await call(header()));
  });

  it.each([
    ['the client_secret itself', () => tenant.clientSecret],
    ['the operator token', () => t.adminToken],
  ])('%s as the bearer: 401 saying it is no access token and where one comes from', async (_label, bearer) => {
    const response = await call(`Bearer ${bearer()}`);
    expectUnauthorized(response);
    expect(response.body.detail).toMatch(
      /^The bearer token is not an access token\. Get one from POST \/api\/v1\/oauth\/token/,
    );
  });

  it('a token of the right shape that fails verification is said to be invalid or expired', async () => {
    const response = await call(`Bearer ${forge({ key: attacker.privateKey })}`);
    expectUnauthorized(response);
    expect(response.body.detail).toBe('The bearer token is invalid or expired. Fetch a new token and retry once.');
  });

  it('accepts the scheme name in any case', async () => {
    expect((await call(`bearer ${tenant.token}`)).status).toBe(200);
  });
});

describe('one keep-alive connection whose Authorization header changes between requests', () => {
  it('each request is judged by its own header (the token read last on the connection is not reused)', async () => {
    const other = await tenantWithToken(t);
    const [header, payload, signature] = tenant.token.split('.') as [string, string, string];
    const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
    const connection = new Client(t.http.baseUrl);
    const connected: unknown[] = [];
    connection.on('connect', () => connected.push(1));
    try {
      const get = async (authorization?: string) => {
        const response = await connection.request({
          method: 'GET',
          path: SITES,
          headers: authorization === undefined ? {} : { authorization },
        });
        const body = (await response.body.json()) as { data?: { attributes: { clientId: string } }[] };
        return { status: response.statusCode, clients: body.data?.map((site) => site.attributes.clientId) };
      };
      await t.http.post(SITES, { token: other.token, json: siteBody() });
      expect(await get(`Bearer ${tenant.token}`)).toMatchObject({ status: 200 });
      expect((await get(`Bearer ${header}.${payload}.${flipped}`)).status).toBe(401);
      expect((await get(`Bearer ${tenant.token} `)).status).toBe(200);
      expect((await get(`Bearer ${tenant.token} x`)).status).toBe(401);
      expect((await get()).status).toBe(401);
      const asOther = await get(`Bearer ${other.token}`);
      expect(asOther.status).toBe(200);
      expect(new Set(asOther.clients)).toEqual(new Set([other.tenantId]));
      expect((await get(`Bearer ${tenant.token}`)).status).toBe(200);
      expect(connected).toHaveLength(1);
    } finally {
      await connection.close();
    }
  });
});

describe('401 for tokens that are not ours or not valid now', () => {
  it.each([
    ['garbage', () => 'not-a-token'],
    ['three garbage segments', () => 'a.b.c'],
    ['dots only', () => '..'],
    ['non-JSON segments', () => `${b64('nope')}.${b64('nope')}.${b64('nope')}`],
    [
      'a cursor-like value',
      () =>
        `${randomBytes(12).toString('base64url')}.${randomBytes(30).toString('base64url')}.${randomBytes(16).toString('base64url')}`,
    ],
  ])('%s', async (_label, token) => {
    expectUnauthorized(await call(`Bearer ${token()}`));
  });

  it('an expired token, whether or not it was used before', async () => {
    const used = tenant.token;
    expect((await call(`Bearer ${used}`)).status).toBe(200);
    const unused = await tokenFor(t, tenant);
    clock.advance((t.config.tokenTtlSeconds + 6) * 1000);
    expectUnauthorized(await call(`Bearer ${used}`));
    expectUnauthorized(await call(`Bearer ${unused}`));
    const expiredForged = forge({
      key: serverKey(),
      payload: claims({ iat: seconds() - 120, nbf: seconds() - 120, exp: seconds() - 60 }),
    });
    expectUnauthorized(await call(`Bearer ${expiredForged}`));
  });

  it('a token that is not yet valid', async () => {
    const future = seconds() + 3600;
    expectUnauthorized(
      await call(
        `Bearer ${forge({ key: serverKey(), payload: claims({ iat: future, nbf: future, exp: future + 600 }) })}`,
      ),
    );
  });

  it('a tampered payload (another tenant, wider scope) with the original signature', async () => {
    const other = await tenantWithToken(t);
    const [header, payload, signature] = tenant.token.split('.') as [string, string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    for (const change of [
      { tid: other.tenantId },
      { scope: `${decoded.scope} admin` },
      { exp: decoded.exp + 3600 },
      { sub: other.clientId },
    ]) {
      expectUnauthorized(await call(`Bearer ${header}.${b64({ ...decoded, ...change })}.${signature}`));
    }
  });

  it('a tampered signature or header', async () => {
    const [header, payload, signature] = tenant.token.split('.') as [string, string, string];
    const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
    expectUnauthorized(await call(`Bearer ${header}.${payload}.${flipped}`));
    expectUnauthorized(await call(`Bearer ${header}.${payload}.${signature.slice(0, -4)}`));
    const otherHeader = b64({ ...JSON.parse(Buffer.from(header, 'base64url').toString('utf8')), kid: 'other' });
    expectUnauthorized(await call(`Bearer ${otherHeader}.${payload}.${signature}`));
  });

  it('alg none, with or without a signature segment', async () => {
    for (const alg of ['none', 'None', 'NONE']) {
      const unsigned = forge({ header: { alg, typ: 'at+jwt' } });
      expectUnauthorized(await call(`Bearer ${unsigned}`));
      expectUnauthorized(await call(`Bearer ${unsigned}${b64('x')}`));
    }
  });

  it('HS256 signed with the public key (algorithm confusion)', async () => {
    const publicKey = t.keys.tokenPublicKey;
    const secrets = [
      publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      publicKey.export({ format: 'der', type: 'spki' }),
      Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'),
      JSON.stringify(publicKey.export({ format: 'jwk' })),
    ];
    for (const secret of secrets) {
      expectUnauthorized(await call(`Bearer ${forge({ secret })}`));
      expectUnauthorized(
        await call(`Bearer ${forge({ secret, header: { alg: 'HS256', typ: 'at+jwt', kid: t.keys.tokenKeyId } })}`),
      );
    }
  });

  it('a token signed by another Ed25519 key, also when its header names or embeds that key', async () => {
    const jwk = attacker.publicKey.export({ format: 'jwk' });
    const headers = [
      { alg: 'EdDSA', typ: 'at+jwt' },
      { alg: 'EdDSA', typ: 'at+jwt', kid: t.keys.tokenKeyId },
      { alg: 'EdDSA', typ: 'at+jwt', jwk },
      { alg: 'EdDSA', typ: 'at+jwt', jku: 'https://attacker.example/jwks.json', kid: 'attacker' },
      { alg: 'EdDSA', typ: 'at+jwt', x5u: 'https://attacker.example/cert.pem' },
      { alg: 'EdDSA', typ: 'at+jwt', kid: '../../../../dev/null' },
      { alg: 'EdDSA', typ: 'at+jwt', kid: "' OR '1'='1" },
    ];
    for (const header of headers)
      expectUnauthorized(await call(`Bearer ${forge({ header, key: attacker.privateKey })}`));
  });

  it.each([
    ['wrong issuer', { iss: 'site-services/production' }],
    ['foreign issuer', { iss: 'https://accounts.example.com' }],
    ['wrong audience', { aud: 'site-services-api/production' }],
    ['audience list without ours', { aud: ['other-api'] }],
    ['no exp', { exp: undefined }],
    ['no jti', { jti: undefined }],
    ['no tid', { tid: undefined }],
    ['no scope', { scope: undefined }],
    ['no sub', { sub: undefined }],
    ['numeric tid', { tid: 42 }],
    ['string exp', { exp: 'tomorrow' }],
    ['unknown client', { sub: 'cli_unknown' }],
  ])('%s, even when signed with the server key', async (_label, overrides) => {
    const payload = Object.fromEntries(Object.entries(claims(overrides)).filter(([, value]) => value !== undefined));
    expectUnauthorized(await call(`Bearer ${forge({ key: serverKey(), payload })}`));
  });

  it.each([
    ['typ JWT', { alg: 'EdDSA', typ: 'JWT' }],
    ['no typ', { alg: 'EdDSA' }],
    ['alg Ed25519 spelled as ES256', { alg: 'ES256', typ: 'at+jwt' }],
    ['critical extension', { alg: 'EdDSA', typ: 'at+jwt', crit: ['exp'] }],
  ])('%s, even when signed with the server key', async (_label, header) => {
    expectUnauthorized(await call(`Bearer ${forge({ header, key: serverKey() })}`));
  });

  it('a token whose tenant is not the tenant of its credential pair', async () => {
    const other = await tenantWithToken(t);
    expectUnauthorized(await call(`Bearer ${forge({ key: serverKey(), payload: claims({ tid: other.tenantId }) })}`));
  });

  it('an oversized token, even a genuine one', async () => {
    expectUnauthorized(await call(`Bearer ${'a'.repeat(5000)}`));
    expectUnauthorized(
      await call(`Bearer ${forge({ key: serverKey(), payload: claims({ padding: 'x'.repeat(5000) }) })}`),
    );
  });

  it('checks the token before reading the body (a bad body still yields 401)', async () => {
    const response = await t.http.post(SITES, {
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
      body: '{',
    });
    expectUnauthorized(response);
  });
});

describe('another environment', () => {
  let production: TestApp;
  beforeAll(async () => {
    // Production configured with the sandbox's very signing key: only issuer and audience tell them apart.
    const configured = loadConfig({
      ENVIRONMENT: 'production',
      TOKEN_SIGNING_KEY: t.keys.tokenPrivateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      APP_SECRET: randomBytes(32).toString('base64'),
      WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ADMIN_TOKEN: `adm_${randomBytes(16).toString('hex')}`,
    });
    production = await startTestApp({
      config: { ...configured, logLevel: 'silent', rateLimitPerMinute: 1_000_000 },
      database: t.database,
    });
  });
  afterAll(async () => production?.close());

  it('a sandbox token is 401 in production and a production token is 401 in the sandbox', async () => {
    const productionToken = await tokenFor(production, tenant);
    expect((await production.http.get(SITES, { token: productionToken })).status).toBe(200);
    expectUnauthorized(await production.http.get(SITES, { token: tenant.token }));
    expectUnauthorized(await call(`Bearer ${productionToken}`));
  });

  it('a production token is signed for production', async () => {
    const payload = JSON.parse(
      Buffer.from((await tokenFor(production, tenant)).split('.')[1]!, 'base64url').toString('utf8'),
    );
    expect(payload).toMatchObject({ iss: 'site-services/production', aud: 'site-services-api/production' });
  });
});

describe('403 for a missing scope', () => {
  it('a token narrowed by the scope parameter', async () => {
    const readOnly = await tokenFor(t, tenant, 'sites:read');
    expect((await call(`Bearer ${readOnly}`)).status).toBe(200);
    const response = await call(`Bearer ${readOnly}`, 'POST');
    expectProblem(response, 403, 'forbidden');
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer realm="site-services", error="insufficient_scope", scope="sites:write"',
    );

    const writeOnly = await tokenFor(t, tenant, 'sites:write');
    expectProblem(await call(`Bearer ${writeOnly}`), 403, 'forbidden');
    const unrelated = await tokenFor(t, tenant, 'webhooks:read');
    expectProblem(await call(`Bearer ${unrelated}`), 403, 'forbidden');
  });

  it('a tenant provisioned without the scope', async () => {
    const narrow = await tenantWithToken(t, { scopes: ['sites:read'] });
    expectProblem(await t.http.post(SITES, { token: narrow.token, json: siteBody() }), 403, 'forbidden');
  });
});

describe('revocation and narrowed scopes reach tokens already issued', () => {
  it('revoking a pair through the operator API rejects its tokens at once; the other pair keeps working', async () => {
    const owner = await tenantWithToken(t);
    const added = await admin(t, 'POST', `/admin/v1/tenants/${owner.tenantId}/credentials`);
    const otherToken = await tokenFor(t, {
      clientId: added.body.data.client_id,
      clientSecret: added.body.data.client_secret,
    });
    expect((await call(`Bearer ${owner.token}`)).status).toBe(200);
    expect((await admin(t, 'DELETE', `/admin/v1/tenants/${owner.tenantId}/credentials/${owner.clientId}`)).status).toBe(
      204,
    );
    expectUnauthorized(await call(`Bearer ${owner.token}`));
    expect((await call(`Bearer ${otherToken}`)).status).toBe(200);
  });

  it('a revocation made by another process takes effect within 5 seconds', async () => {
    const owner = await tenantWithToken(t);
    expect((await call(`Bearer ${owner.token}`)).status).toBe(200);
    // Another process revokes: this process only learns of it when its cached status expires.
    await t.database.db
      .updateTable('client_credentials')
      .set({ revoked_at: clock.now() })
      .where('client_id', '=', owner.clientId)
      .execute();
    clock.advance(5_001);
    expectUnauthorized(await call(`Bearer ${owner.token}`));
  });

  it("narrowing a tenant's scopes takes effect on tokens already issued", async () => {
    const owner = await tenantWithToken(t);
    expect((await t.http.post(SITES, { token: owner.token, json: siteBody() })).status).toBe(201);
    expect((await admin(t, 'PATCH', `/admin/v1/tenants/${owner.tenantId}`, { scopes: ['sites:read'] })).status).toBe(
      200,
    );
    expectProblem(await t.http.post(SITES, { token: owner.token, json: siteBody() }), 403, 'forbidden');
    expect((await call(`Bearer ${owner.token}`)).status).not.toBe(401);
    expect((await t.http.get(SITES, { token: owner.token })).status).toBe(200);

    // Narrowed by another process: visible after the status cache expires.
    await t.database.db
      .updateTable('tenants')
      .set({ scopes: ['sites:write'] })
      .where('id', '=', owner.tenantId)
      .execute();
    clock.advance(5_001);
    expectProblem(await t.http.get(SITES, { token: owner.token }), 403, 'forbidden');
  });
});
