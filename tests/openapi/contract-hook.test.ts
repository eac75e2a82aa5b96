import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOpenApiDocument, type OpenApiDocument } from '../../src/http/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, takeContractViolations } from '../helpers/client.js';
import { ContractChecker } from '../helpers/contract.js';
import { HttpClient } from '../helpers/http.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let tenant: Awaited<ReturnType<typeof tenantWithToken>>;
let token: string;
let siteId: string;

beforeAll(async () => {
  t = await startTestApp({
    // A route whose behaviour drifted from its schema: it sends a pre-serialised body that the schema forbids.
    configure: (app) => {
      app.get(
        '/api/v1/drifted',
        {
          schema: {
            operationId: 'drifted',
            summary: 'A route that breaks its own contract',
            tags: ['Test'],
            response: { 200: Type.Object({ name: Type.String() }, { additionalProperties: false }) },
          },
        },
        // A string payload is sent as it is (the route's typed reply would not let a wrong body through).
        async (_request, reply) => reply.type('application/json').send('{"name":42}' as never),
      );
    },
  });
  tenant = await tenantWithToken(t);
  token = tenant.token;
  siteId = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
});
afterAll(async () => t?.close());

/** A client checking against a changed copy of the document. */
function clientWith(change: (document: OpenApiDocument) => void): HttpClient {
  const document = structuredClone(clientOpenApiDocument(t.app));
  change(document);
  return new HttpClient(t.baseUrl, [new ContractChecker(document).hook]);
}

describe('the contract hook of startTestApp', () => {
  it('fails the test that receives a response its route does not honour', async () => {
    await expect(t.http.get('/api/v1/drifted')).rejects.toThrow(
      /GET \/api\/v1\/drifted → 200 \(drifted\): the body does not match the document:\n\s+\/name must be string/,
    );
  });

  it('lets documented responses through, errors and unknown paths included', async () => {
    expect((await t.http.get(`/api/v1/sites/${siteId}`, { token })).status).toBe(200);
    expect((await t.http.get('/api/v1/sites/site_unknown', { token })).status).toBe(404);
    expect((await t.http.get('/api/v1/sites', { token, query: { 'page[size]': 0 } })).status).toBe(422);
    expect((await t.http.get('/api/v1/no-such-thing', { token })).status).toBe(404);
    expect((await t.http.request('DELETE', `/api/v1/sites/${siteId}`, { token })).status).toBe(405);
    expect((await t.http.request('HEAD', `/api/v1/sites/${siteId}`, { token })).status).toBe(200);
  });

  it('lets through the answers every body route can give: 400, 413, 415', async () => {
    const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    expect((await t.http.post('/api/v1/sites', { headers: json, body: '{"name":' })).status).toBe(400);
    expect(
      (
        await t.http.post('/api/v1/sites', {
          headers: json,
          body: JSON.stringify(siteBody({ name: 'x'.repeat(1_100_000) })),
        })
      ).status,
    ).toBe(413);
    expect(
      (await t.http.post('/api/v1/sites', { token, headers: { 'content-type': 'text/plain' }, body: 'name=x' })).status,
    ).toBe(415);
    expect(
      (
        await t.http.post('/api/v1/oauth/token', {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_id: 'x'.repeat(20_000) }),
        })
      ).status,
    ).toBe(413);
    const plain = await t.http.post('/api/v1/oauth/token', {
      headers: { 'content-type': 'text/plain' },
      body: 'grant_type=client_credentials',
    });
    expect(plain.status).toBe(415);
    expect(plain.body.error).toBe('invalid_request');
  });

  it('ignores responses from outside the client API', async () => {
    expect((await t.http.get('/health')).status).toBe(200);
  });

  it('checks the answers the client package receives too (tests/helpers/client.ts), failing the test after it', async () => {
    const client = clientFor(t, tenant);
    expect((await client.sites.get(siteId)).id).toBe(siteId);
    expect(takeContractViolations()).toEqual([]);
    expect((await client.getRaw('/api/v1/drifted')).status).toBe(200);
    const [violation, ...more] = takeContractViolations();
    expect(more).toEqual([]);
    expect(violation?.message).toMatch(
      /GET \/api\/v1\/drifted → 200 \(drifted\): the body does not match the document/,
    );
  });
});

describe('the contract checker', () => {
  it('catches a body that does not match the schema, naming method, path, status and the errors', async () => {
    const http = clientWith((document) => {
      // The Site of every operation is the one named schema.
      document.components.schemas.Site.properties.attributes.properties.name = { type: 'integer' };
    });
    await expect(http.get(`/api/v1/sites/${siteId}`, { token })).rejects.toThrow(
      new RegExp(
        `GET /api/v1/sites/${siteId} → 200 \\(getSite\\): the body does not match the document:\\n\\s+/data/attributes/name must be integer`,
      ),
    );
  });

  it('catches a problem type the operation does not list for its status', async () => {
    const http = clientWith((document) => {
      const conflict = document.paths['/api/v1/sites']!.post!.responses['409'];
      conflict.description = conflict.description.replace(/Problem types: .*\./, 'Problem types: idempotency-pending.');
    });
    const site = siteBody();
    expect((await http.post('/api/v1/sites', { token, json: site })).status).toBe(201);
    await expect(http.post('/api/v1/sites', { token, json: site })).rejects.toThrow(
      /POST \/api\/v1\/sites → 409 \(createSite\): problem type duplicate-resource is not among those documented for this status \(idempotency-pending\)/,
    );
  });

  it('catches an undocumented status', async () => {
    const http = clientWith((document) => {
      delete document.paths['/api/v1/sites/{id}']!.get!.responses['404'];
    });
    await expect(http.get('/api/v1/sites/site_unknown', { token })).rejects.toThrow(
      /GET \/api\/v1\/sites\/site_unknown → 404 \(getSite\): status 404 is not documented/,
    );
  });

  it('catches an undocumented content type', async () => {
    const http = clientWith((document) => {
      const responses = document.paths['/api/v1/sites/{id}']!.get!.responses;
      responses['200'].content = { 'application/xml': responses['200'].content['application/json'] };
    });
    await expect(http.get(`/api/v1/sites/${siteId}`, { token })).rejects.toThrow(
      /→ 200 \(getSite\): content type "application\/json" is not documented \(documented: application\/xml\)/,
    );
  });

  it('catches a missing required header and an invalid header value', async () => {
    const missing = clientWith((document) => {
      document.paths['/api/v1/sites/{id}']!.get!.responses['200'].headers['X-Revision'] = {
        required: true,
        schema: { type: 'string' },
      };
    });
    await expect(missing.get(`/api/v1/sites/${siteId}`, { token })).rejects.toThrow(
      /→ 200 \(getSite\): the required response header X-Revision is missing/,
    );
    const invalid = clientWith((document) => {
      document.paths['/api/v1/sites/{id}']!.get!.responses['200'].headers.ETag.schema = {
        type: 'string',
        pattern: '^W/',
      };
    });
    await expect(invalid.get(`/api/v1/sites/${siteId}`, { token })).rejects.toThrow(
      /→ 200 \(getSite\): response header ETag: "\\"1\\"" does not match/,
    );
  });

  it('checks headers referenced from components.headers (the rate limit headers) like inline ones', async () => {
    const invalid = clientWith((document) => {
      document.components.headers['X-RateLimit-Limit'].schema = { type: 'integer', maximum: 10 };
    });
    await expect(invalid.get(`/api/v1/sites/${siteId}`, { token })).rejects.toThrow(
      /→ 200 \(getSite\): response header X-RateLimit-Limit: "1000000" does not match/,
    );
    const missing = clientWith((document) => {
      document.components.headers['X-RateLimit-Missing'] = { required: true, schema: { type: 'integer' } };
      document.paths['/api/v1/sites/{id}']!.get!.responses['404'].headers['X-RateLimit-Missing'] = {
        $ref: '#/components/headers/X-RateLimit-Missing',
      };
    });
    await expect(missing.get('/api/v1/sites/site_unknown', { token })).rejects.toThrow(
      /→ 404 \(getSite\): the required response header X-RateLimit-Missing is missing/,
    );
  });

  it('catches a successful response of an operation the document lacks', async () => {
    const http = clientWith((document) => {
      delete document.paths['/api/v1/sites/{id}'];
    });
    await expect(http.get(`/api/v1/sites/${siteId}`, { token })).rejects.toThrow(
      /GET \/api\/v1\/sites\/\S+ → 200: the OpenAPI document has no operation GET/,
    );
  });

  it('catches an error of an undocumented path that is not a problem', async () => {
    const http = clientWith((document) => {
      document.components.schemas.Problem.required.push('instance');
    });
    await expect(http.get('/api/v1/no-such-thing', { token })).rejects.toThrow(
      /→ 404 \(undocumented path\): the body does not match the document:\n\s+\(root\) must have required property 'instance'/,
    );
  });
});
