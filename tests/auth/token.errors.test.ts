import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectOAuthError, expectProblem } from '../helpers/problems.js';
import { createTenant, type TestTenant } from '../helpers/tenants.js';

const TOKEN = '/api/v1/oauth/token';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterAll(async () => t?.close());

const valid = () => ({
  grant_type: 'client_credentials',
  client_id: tenant.clientId,
  client_secret: tenant.clientSecret,
});

function basic(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
}

describe('token endpoint: invalid_request (400)', () => {
  it.each(['grant_type', 'client_id', 'client_secret'])('a missing %s', async (field) => {
    const body: Record<string, string> = valid();
    delete body[field];
    expectOAuthError(await t.http.post(TOKEN, { json: body }), 400, 'invalid_request', 'malformed-request');
    expectOAuthError(
      await t.http.post(TOKEN, { body: new URLSearchParams(body) }),
      400,
      'invalid_request',
      'malformed-request',
    );
  });

  it('empty client_id or client_secret', async () => {
    expectOAuthError(await t.http.post(TOKEN, { json: { ...valid(), client_id: '' } }), 400, 'invalid_request');
    expectOAuthError(await t.http.post(TOKEN, { json: { ...valid(), client_secret: '' } }), 400, 'invalid_request');
  });

  it.each([
    ['client_id', 12345],
    ['client_secret', ['a', 'b']],
    ['grant_type', { type: 'client_credentials' }],
    ['scope', true],
    ['client_id', null],
  ])('a non-string %s (%j)', async (field, value) => {
    expectOAuthError(await t.http.post(TOKEN, { json: { ...valid(), [field]: value } }), 400, 'invalid_request');
  });

  it.each(['client_id', 'client_secret', 'grant_type', 'scope'])('a form parameter %s given twice', async (field) => {
    const form = new URLSearchParams({ ...valid(), scope: 'sites:read' });
    form.append(field, form.get(field)!);
    expectOAuthError(await t.http.post(TOKEN, { body: form }), 400, 'invalid_request');
  });

  it('a body that is not an object, and no body at all', async () => {
    expectOAuthError(await t.http.post(TOKEN, { json: [valid()] }), 400, 'invalid_request');
    expectOAuthError(await t.http.post(TOKEN, { json: 'client_credentials' }), 400, 'invalid_request');
    expectOAuthError(await t.http.post(TOKEN, {}), 400, 'invalid_request');
  });

  it('malformed JSON', async () => {
    expectOAuthError(
      await t.http.post(TOKEN, { body: '{"grant_type":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
      'malformed-request',
    );
  });

  it('client credentials both in HTTP Basic and in the body', async () => {
    const response = await t.http.post(TOKEN, {
      json: valid(),
      headers: { authorization: basic(tenant.clientId, tenant.clientSecret) },
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('a body client_id that differs from the HTTP Basic client', async () => {
    const response = await t.http.post(TOKEN, {
      json: { grant_type: 'client_credentials', client_id: 'cli_someoneelse' },
      headers: { authorization: basic(tenant.clientId, tenant.clientSecret) },
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('U+0000 in a parameter, in JSON, a form or HTTP Basic, is invalid_request, not a server error', async () => {
    expectOAuthError(
      await t.http.post(TOKEN, { json: { ...valid(), client_id: `${tenant.clientId}\u0000` } }),
      400,
      'invalid_request',
      'malformed-request',
    );
    const form = `grant_type=client_credentials&client_id=${tenant.clientId}%00&client_secret=x`;
    expectOAuthError(
      await t.http.post(TOKEN, { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      400,
      'invalid_request',
    );
    const response = await t.http.post(TOKEN, {
      json: { grant_type: 'client_credentials' },
      headers: { authorization: basic(`${tenant.clientId}\u0000`, tenant.clientSecret) },
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('malformed HTTP Basic credentials', async () => {
    const response = await t.http.post(TOKEN, {
      json: { grant_type: 'client_credentials' },
      headers: { authorization: `Basic ${Buffer.from('no-colon-here').toString('base64')}` },
    });
    expectOAuthError(response, 400, 'invalid_request');
  });
});

describe('token endpoint: grant and scope errors (400)', () => {
  it.each(['password', 'authorization_code', 'CLIENT_CREDENTIALS'])('unsupported_grant_type %s', async (grant) => {
    expectOAuthError(
      await t.http.post(TOKEN, { json: { ...valid(), grant_type: grant } }),
      400,
      'unsupported_grant_type',
    );
  });

  it('invalid_scope for an unknown scope', async () => {
    expectOAuthError(
      await t.http.post(TOKEN, { json: { ...valid(), scope: 'sites:read sites:delete' } }),
      400,
      'invalid_scope',
    );
    expectOAuthError(await t.http.post(TOKEN, { json: { ...valid(), scope: 'SITES:READ' } }), 400, 'invalid_scope');
  });

  it("invalid_scope for a scope beyond the tenant's", async () => {
    const narrow = await createTenant(t, { scopes: ['sites:read'] });
    const body = { grant_type: 'client_credentials', client_id: narrow.clientId, client_secret: narrow.clientSecret };
    expectOAuthError(
      await t.http.post(TOKEN, { json: { ...body, scope: 'sites:read sites:write' } }),
      400,
      'invalid_scope',
    );
    expect((await t.http.post(TOKEN, { json: { ...body, scope: 'sites:read' } })).status).toBe(200);
  });

  it('invalid_scope for a tenant without any scope', async () => {
    const none = await createTenant(t, { scopes: [] });
    const response = await t.http.post(TOKEN, {
      json: { grant_type: 'client_credentials', client_id: none.clientId, client_secret: none.clientSecret },
    });
    expectOAuthError(response, 400, 'invalid_scope');
  });
});

describe('token endpoint: invalid_client (401)', () => {
  it('an unknown client_id', async () => {
    expectOAuthError(
      await t.http.post(TOKEN, { json: { ...valid(), client_id: 'cli_unknown' } }),
      401,
      'invalid_client',
      'unauthorized',
    );
  });

  it('a wrong client_secret, in the body or as HTTP Basic', async () => {
    expectOAuthError(
      await t.http.post(TOKEN, { json: { ...valid(), client_secret: `${tenant.clientSecret}x` } }),
      401,
      'invalid_client',
    );
    const response = await t.http.post(TOKEN, {
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
      headers: { authorization: basic(tenant.clientId, 'wrong') },
    });
    expectOAuthError(response, 401, 'invalid_client');
  });

  it('a failed HTTP Basic authentication names the Basic scheme in WWW-Authenticate (RFC 6749 §5.2)', async () => {
    const unknown = await t.http.post(TOKEN, {
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
      headers: { authorization: basic('cli_unknown', tenant.clientSecret) },
    });
    expectOAuthError(unknown, 401, 'invalid_client');
    expect(unknown.headers.get('www-authenticate')).toBe('Basic realm="site-services", charset="UTF-8"');
    // Credentials in the body: no authentication scheme was used, so none is named.
    const inBody = await t.http.post(TOKEN, { json: { ...valid(), client_secret: 'wrong' } });
    expectOAuthError(inBody, 401, 'invalid_client');
    expect(inBody.headers.get('www-authenticate')).toBeNull();
  });

  it('the secret of another tenant', async () => {
    const other = await createTenant(t);
    expectOAuthError(
      await t.http.post(TOKEN, { json: { ...valid(), client_secret: other.clientSecret } }),
      401,
      'invalid_client',
    );
  });

  it("a revoked credential pair, while the tenant's other pair keeps working", async () => {
    const owner = await createTenant(t);
    const added = await t.http.post(`/admin/v1/tenants/${owner.tenantId}/credentials`, { token: t.adminToken });
    const revoke = await t.http.delete(`/admin/v1/tenants/${owner.tenantId}/credentials/${owner.clientId}`, {
      token: t.adminToken,
    });
    expect(revoke.status).toBe(204);
    const body = { grant_type: 'client_credentials', client_id: owner.clientId, client_secret: owner.clientSecret };
    expectOAuthError(await t.http.post(TOKEN, { json: body }), 401, 'invalid_client');
    const second = await t.http.post(TOKEN, {
      json: {
        grant_type: 'client_credentials',
        client_id: added.body.data.client_id,
        client_secret: added.body.data.client_secret,
      },
    });
    expect(second.status).toBe(200);
  });

  it('bad credentials win over a bad scope only after authentication (no scope probing)', async () => {
    const response = await t.http.post(TOKEN, { json: { ...valid(), client_secret: 'wrong', scope: 'sites:read' } });
    expectOAuthError(response, 401, 'invalid_client');
  });
});

describe('token endpoint: media types and methods', () => {
  it.each([
    ['text/plain', 'grant_type=client_credentials'],
    ['application/xml', '<grant_type>client_credentials</grant_type>'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('%s is 415 with error invalid_request', async (contentType, body) => {
    const response = await t.http.post(TOKEN, { body, headers: { 'content-type': contentType } });
    expectOAuthError(response, 415, 'invalid_request', 'unsupported-media-type');
    // It names what the endpoint takes: a form or JSON.
    expect(response.body.detail).toMatch(/Send application\/x-www-form-urlencoded or application\/json\.$/);
  });

  it('a body too large for a token request is refused without reading it', async () => {
    const response = await t.http.post(TOKEN, { json: { ...valid(), padding: 'x'.repeat(20_000) } });
    expectOAuthError(response, 413, 'invalid_request', 'payload-too-large');
  });

  it('GET is 405 with Allow: POST', async () => {
    const response = await t.http.get(TOKEN);
    expectProblem(response, 405, 'method-not-allowed');
    expect(response.headers.get('allow')).toBe('POST');
  });
});
