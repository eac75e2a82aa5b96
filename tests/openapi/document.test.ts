import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPES } from '../../src/http/problem-types.js';
import { ALL_SCOPES, SCOPE_DESCRIPTIONS } from '../../src/modules/auth/scopes.js';
import { EVENT_TYPES } from '../../src/modules/outbox/types.js';
import { DELIVERY_HEADERS } from '../../src/modules/outbox/webhooks-openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { SPEC_ENDPOINTS } from './spec-endpoints.js';

let t: TestApp;
let doc: any;

const PRODUCTION = 'https://api.site-services.example';
const SANDBOX = 'https://sandbox.site-services.example';

beforeAll(async () => {
  t = await startTestApp({
    config: { productionBaseUrl: PRODUCTION, sandboxBaseUrl: SANDBOX, rateLimitPerMinute: 100 },
  });
  const response = await t.http.get('/api/v1/openapi.json');
  expect(response.status).toBe(200);
  expect(response.contentType).toMatch(/^application\/json/);
  doc = response.body;
});
afterAll(async () => t?.close());

/** What Node's HTTP parser answers before any route runs (tests/http/client-errors.test.ts): any operation can get them. */
const PARSER_STATUSES = ['408', '431'];

/** `{id}` and `{visitId}` name the same path shape. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

function operation(method: string, path: string): any {
  const entry = Object.entries(doc.paths).find(([candidate]) => shape(candidate) === shape(path));
  return (entry?.[1] as any)?.[method.toLowerCase()];
}

/** A schema, or the named schema it refers to (#/components/schemas/…), of the document given. */
function deref(schema: any, document: any = doc): any {
  const name = /^#\/components\/schemas\/(.+)$/.exec(schema?.$ref ?? '')?.[1];
  return name === undefined ? schema : document.components.schemas[name];
}

function allOperations(document: any): [string, string, any][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as object).map(([method, op]) => [method, path, op] as [string, string, any]),
  );
}

describe('the client document', () => {
  it("is OpenAPI 3.1.0, version 1.0.0, with a contact, this environment's server first and the other one", () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.contact).toEqual({ name: 'Site Services API support', url: `${t.config.publicBaseUrl}/docs` });
    // The test app runs as sandbox: generators take servers[0] as the default base address.
    expect(doc.servers).toEqual([
      { url: SANDBOX, description: 'Sandbox' },
      { url: PRODUCTION, description: 'Production' },
    ]);
  });

  it('describes every operation, in both documents', async () => {
    const admin = (await t.http.get('/admin/v1/openapi.json', { token: t.adminToken })).body;
    for (const document of [doc, admin]) {
      expect(document.info.contact.url).toBeTruthy();
      for (const [method, path, op] of allOperations(document))
        expect(op.description?.length ?? 0, `${method} ${path}`).toBeGreaterThan(20);
    }
  });

  it('declares the OAuth client-credentials scheme with all six scopes and their descriptions', () => {
    const scheme = doc.components.securitySchemes.clientCredentials;
    expect(scheme.type).toBe('oauth2');
    // The test app runs as sandbox: its token endpoint is the sandbox one.
    expect(scheme.flows.clientCredentials.tokenUrl).toBe(`${SANDBOX}/api/v1/oauth/token`);
    expect(scheme.flows.clientCredentials.scopes).toEqual(
      Object.fromEntries(ALL_SCOPES.map((scope) => [scope, SCOPE_DESCRIPTIONS[scope]])),
    );
    expect(doc.components.securitySchemes.operatorToken).toBeUndefined();
  });

  it('holds only /api/v1 operations: no operator, health or documentation pages', () => {
    const paths = Object.keys(doc.paths);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(path.startsWith('/api/v1/')).toBe(true);
  });

  it('gives every operation a unique operationId, a summary, tags and documented 2xx responses', () => {
    const ids = new Set<string>();
    for (const [method, path, op] of allOperations(doc)) {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      expect(op.summary, `${method} ${path}`).toBeTruthy();
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
      expect(Object.keys(op.responses).some((status) => status.startsWith('2'))).toBe(true);
    }
    const declared = new Map(
      doc.tags.map((tag: { name: string; description?: string }) => [tag.name, tag.description]),
    );
    for (const [method, path, op] of allOperations(doc))
      for (const tag of op.tags) expect(declared.get(tag), `${method} ${path} tag ${tag}`).toBeTruthy();
  });

  it('names shared schemas after their $id and lists every problem type', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names).toEqual(expect.arrayContaining(['Problem', 'ValidationProblem', 'OAuthProblem']));
    expect(names.filter((name) => /^def-\d+$/.test(name))).toEqual([]);
    expect(JSON.stringify(doc.paths)).not.toMatch(/def-\d+/);
    const listed = doc.components.schemas.Problem['x-problem-types'];
    expect(listed.map((type: { slug: string }) => type.slug)).toEqual(Object.keys(PROBLEM_TYPES));
    for (const type of listed) expect(type.type).toBe(`${t.config.problemBaseUrl}/${type.slug}`);
    for (const slug of Object.keys(PROBLEM_TYPES)) {
      expect(doc.components.schemas.Problem.description).toContain(`\`${slug}\``);
      expect(doc.info.description).toContain(`${t.config.problemBaseUrl}/${slug}`);
    }
    expect(doc.components.schemas.ValidationProblem.required).toEqual(
      expect.arrayContaining(['type', 'title', 'status', 'detail', 'errors']),
    );
  });

  it('refuses unknown members in every request body (the token endpoint excepted, as RFC 6749 requires)', () => {
    let bodies = 0;
    for (const [method, path, op] of allOperations(doc)) {
      if (!op.requestBody) continue;
      for (const [mediaType, media] of Object.entries(op.requestBody.content as Record<string, any>)) {
        bodies += 1;
        const expected = op.operationId === 'createToken';
        // A body of several shapes (the simulator's actions) refuses unknown members in every shape.
        const schema = deref(media.schema);
        const shapes = schema.oneOf ?? [schema];
        for (const shape of shapes) expect(shape.additionalProperties, `${method} ${path} ${mediaType}`).toBe(expected);
      }
    }
    expect(bodies).toBeGreaterThanOrEqual(4);
  });

  it('answers problems as application/problem+json, 422 in the validation form, token errors as application/json', () => {
    /** Operations whose 422 has a named form of its own beside the validation form. */
    const LIMIT_FORMS: Record<string, string> = {
      // A webhook create or activation can also meet the cap on active subscriptions.
      createWebhookSubscription: 'SubscriptionLimitProblem',
      updateWebhookSubscription: 'SubscriptionLimitProblem',
      // An upload can also meet the tenant's storage limit.
      uploadReturnLabel: 'StorageLimitProblem',
      uploadFileAttachment: 'StorageLimitProblem',
    };
    for (const [method, path, op] of allOperations(doc)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        if (Number(status) < 400) continue;
        const where = `${method} ${path} ${status}`;
        if (PARSER_STATUSES.includes(status)) {
          // Answered before any route runs: a problem on every operation (below).
          expect(response.content, where).toEqual({
            'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
          });
        } else if (op.operationId === 'createToken') {
          expect(response.content, where).toEqual({
            'application/json': { schema: { $ref: '#/components/schemas/OAuthProblem' } },
          });
        } else if (status === '422' && LIMIT_FORMS[op.operationId]) {
          expect(response.content, where).toEqual({
            'application/problem+json': {
              schema: {
                anyOf: [
                  { $ref: '#/components/schemas/ValidationProblem' },
                  { $ref: `#/components/schemas/${LIMIT_FORMS[op.operationId]}` },
                ],
              },
            },
          });
        } else {
          const ref = status === '422' ? '#/components/schemas/ValidationProblem' : '#/components/schemas/Problem';
          expect(response.content, where).toEqual({ 'application/problem+json': { schema: { $ref: ref } } });
        }
      }
    }
  });

  it('documents Retry-After on every 429 and 503, and WWW-Authenticate on 401 and 403', () => {
    for (const [method, path, op] of allOperations(doc)) {
      const where = `${method} ${path}`;
      expect(op.responses['429']?.headers?.['Retry-After'], where).toMatchObject({
        required: true,
        schema: { type: 'integer' },
      });
      expect(op.responses['503']?.headers?.['Retry-After'], where).toMatchObject({ schema: { type: 'integer' } });
      if (op.security?.length) {
        expect(op.responses['401'].headers['WWW-Authenticate'], `${where} 401`).toMatchObject({ required: true });
        // A 403 for a feature the client lacks (webhook access) has no scope to challenge for.
        expect(op.responses['403'].headers['WWW-Authenticate'], `${where} 403`).toBeDefined();
        expect(op.responses['403'].headers['WWW-Authenticate'].required ?? false, `${where} 403`).toBe(false);
      }
    }
  });

  it('declares the x-ratelimit-* headers once and references them from every response the service gives', () => {
    expect(Object.keys(doc.components.headers)).toEqual(
      expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
    );
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
      expect(doc.components.headers[name], name).toMatchObject({ required: true, schema: { type: 'integer' } });
    }
    for (const [method, path, op] of allOperations(doc)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
          // Node's HTTP parser answers these before the rate limit sees the request.
          if (PARSER_STATUSES.includes(status)) {
            expect(response.headers?.[name], `${method} ${path} ${status} ${name}`).toBeUndefined();
            continue;
          }
          expect(response.headers?.[name], `${method} ${path} ${status} ${name}`).toEqual({
            $ref: `#/components/headers/${name}`,
          });
        }
      }
    }
  });

  it('documents the rules left open by SPEC in its descriptions', () => {
    const text: string = doc.info.description;
    for (const fragment of [
      'maxLength',
      'Low`, `Normal`, `High`',
      'Client API',
      '`New` → `Scheduled` → `Dispatched` → `Completed`',
      'messages with their attachments, use `site-visits:read` (GET) and `site-visits:write`',
      'no separate message scopes',
      '100 requests per minute',
      'Idempotency-Key',
      'If-Match',
      'page[after]',
    ]) {
      expect(text).toContain(fragment);
    }
  });
});

describe("SPEC's endpoint table", () => {
  it.for(SPEC_ENDPOINTS)('$method $path: every status, the scope and the headers of SPEC', (endpoint) => {
    const op = operation(endpoint.method, endpoint.path);
    expect(
      t.app.hasRoute({ method: endpoint.method, url: endpoint.path.replace(/\{([^}]+)\}/g, ':$1') }),
      'served',
    ).toBe(true);
    expect(op, 'documented').toBeDefined();
    const statuses = Object.keys(op.responses).map(Number);
    expect(statuses).toEqual(expect.arrayContaining(endpoint.statuses));
    expect(op.security).toEqual(endpoint.scope ? [{ clientCredentials: [endpoint.scope] }] : []);
    if (endpoint.scope) expect(op.description).toContain(`\`${endpoint.scope}\``);

    const headers = (op.parameters ?? [])
      .filter((parameter: any) => parameter.in === 'header')
      .map((parameter: any) => parameter.name);
    if (endpoint.idempotencyKey) {
      expect(headers).toContain('Idempotency-Key');
      expect(op.responses['201'].headers['Idempotent-Replayed']).toMatchObject({ schema: { const: 'true' } });
    }
    if (endpoint.ifMatch) expect(headers).toContain('If-Match');
    const success = String(endpoint.statuses[0]);
    if (endpoint.etag)
      expect(op.responses[success].headers.ETag).toMatchObject({ required: true, schema: { type: 'string' } });
    if (endpoint.multipart) {
      const body = op.requestBody.content['multipart/form-data'].schema;
      expect(body.properties.file).toMatchObject({ type: 'string', format: 'binary' });
      expect(body.required).toContain('file');
    }
    if (endpoint.binary) {
      expect(Object.keys(op.responses['200'].content).sort()).toEqual([...endpoint.binary].sort());
    }
    if (endpoint.method === 'POST' && endpoint.path.endsWith('/oauth/token')) {
      expect(Object.keys(op.requestBody.content).sort()).toEqual([
        'application/json',
        'application/x-www-form-urlencoded',
      ]);
    }
  });
});

describe('the named schemas', () => {
  const RESOURCES = ['Site', 'SiteVisit', 'Message', 'WebhookSubscription', 'Project', 'Item', 'FileObject'];
  const BODIES = [
    'SiteCreate',
    'SitePatch',
    'SiteVisitCreate',
    'SiteVisitPatch',
    'MessageCreate',
    'MessagePatch',
    'WebhookSubscriptionCreate',
    'WebhookSubscriptionPatch',
  ];
  const LISTS = ['SiteList', 'SiteVisitList', 'MessageList', 'WebhookSubscriptionList', 'ProjectList', 'ItemList'];

  it('name every resource, body, list envelope and shared shape once', () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of [...RESOURCES, ...BODIES, ...LISTS, 'FileVersion', 'Problem', 'ValidationProblem'])
      expect(names, name).toContain(name);
    // No operation writes a resource inline: whatever carries `attributes` is a named schema.
    const inline: string[] = [];
    const visit = (value: unknown, at: string) => {
      if (value === null || typeof value !== 'object') return;
      if ((value as any).properties?.attributes) inline.push(at);
      for (const [key, member] of Object.entries(value)) visit(member, `${at}/${key}`);
    };
    visit(doc.paths, '#/paths');
    visit(doc.webhooks, '#/webhooks');
    expect(inline).toEqual([]);
  });

  it('are what every operation of a resource refers to', () => {
    const responseSchema = (method: string, path: string, status: string) =>
      operation(method, path).responses[status].content['application/json'].schema.$ref;
    const bodySchema = (method: string, path: string) =>
      operation(method, path).requestBody.content['application/json'].schema.$ref;
    const named = (name: string) => `#/components/schemas/${name}`;
    for (const [collection, resource, document] of [
      ['/api/v1/sites', 'Site', 'SiteDocument'],
      ['/api/v1/site-visits', 'SiteVisit', 'SiteVisitDocument'],
      ['/api/v1/messages', 'Message', 'MessageDocument'],
    ] as const) {
      expect(responseSchema('GET', collection, '200')).toBe(named(`${resource}List`));
      expect(responseSchema('POST', collection, '201')).toBe(named(document));
      expect(responseSchema('GET', `${collection}/{id}`, '200')).toBe(named(document));
      expect(responseSchema('PATCH', `${collection}/{id}`, '200')).toBe(named(document));
      expect(bodySchema('POST', collection)).toBe(named(`${resource}Create`));
      expect(bodySchema('PATCH', `${collection}/{id}`)).toBe(named(`${resource}Patch`));
      expect(doc.components.schemas[document].properties.data).toEqual({ $ref: named(resource) });
      expect(doc.components.schemas[`${resource}List`].properties.data.items).toEqual({ $ref: named(resource) });
    }
    expect(responseSchema('GET', '/api/v1/webhook-subscriptions', '200')).toBe(named('WebhookSubscriptionList'));
    expect(bodySchema('POST', '/api/v1/webhook-subscriptions')).toBe(named('WebhookSubscriptionCreate'));
    expect(bodySchema('PATCH', '/api/v1/webhook-subscriptions/{id}')).toBe(named('WebhookSubscriptionPatch'));
    expect(responseSchema('GET', '/api/v1/projects', '200')).toBe(named('ProjectList'));
    expect(responseSchema('GET', '/api/v1/items', '200')).toBe(named('ItemList'));
    const visit = doc.components.schemas.SiteVisit.properties.attributes.properties;
    expect(visit.returnLabel.anyOf).toContainEqual({ $ref: named('FileObject') });
    expect(doc.components.schemas.FileObject.properties.versions.items).toEqual({ $ref: named('FileVersion') });
  });

  it('show an example with every resource, request body and event, valid against its schema', async () => {
    const admin = (await t.http.get('/admin/v1/openapi.json', { token: t.adminToken })).body;
    const events = EVENT_TYPES.map((type) =>
      doc.webhooks[type].post.requestBody.content['application/json'].schema.$ref.split('/').pop(),
    );
    const operatorResources = ['Tenant', 'TenantCreate', 'Project', 'Item', 'SiteAsset', 'OperatorSiteVisit'];
    for (const [document, names] of [
      [doc, [...RESOURCES, ...BODIES, ...events, 'Problem', 'ValidationProblem']],
      [admin, [...operatorResources, 'WebhookSubscriptionWithHealth', 'WebhookDelivery', 'SiteVisitCreate']],
    ] as const) {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
      ajv.addSchema({ $id: 'https://document.test/', components: document.components });
      for (const name of names) {
        const { examples } = document.components.schemas[name];
        expect(examples, name).toHaveLength(1);
        const validate = ajv.getSchema(`https://document.test/#/components/schemas/${name}`)!;
        expect(validate(examples[0]), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
      // Every example the document shows is valid, not only those of the names above.
      for (const [name, schema] of Object.entries(document.components.schemas as Record<string, any>)) {
        if (!schema.examples) continue;
        const validate = ajv.getSchema(`https://document.test/#/components/schemas/${name}`)!;
        expect(validate(schema.examples[0]), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
  });
});

describe('the webhooks map', () => {
  it('has one entry per event type, with the envelope and every delivery header', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const post = doc.webhooks[type].post;
      const ref: string = post.requestBody.content['application/json'].schema.$ref;
      const envelope = doc.components.schemas[ref.split('/').pop()!];
      expect(envelope.properties.type.const).toBe(type);
      expect(envelope.required).toEqual([
        'id',
        'type',
        'occurredAt',
        'resourceType',
        'resourceId',
        'payloadVersion',
        'data',
      ]);
      expect(envelope.properties.data.required).toEqual(
        expect.arrayContaining(['clientTicketNumber', 'clientSiteId', 'status']),
      );
      const parameters = Object.fromEntries(post.parameters.map((parameter: any) => [parameter.name, parameter]));
      expect(Object.keys(parameters)).toEqual([
        'x-svc-event-id',
        'x-svc-event-type',
        'x-svc-delivery-id',
        'x-svc-attempt',
        'x-svc-signature',
        'x-svc-signature-alg',
        'x-svc-signature-version',
        'x-svc-timestamp',
      ]);
      for (const header of DELIVERY_HEADERS) {
        expect(parameters[header.name]).toMatchObject({ in: 'header', required: header.required });
        expect(parameters[header.name].description.length).toBeGreaterThan(20);
      }
      expect(parameters['x-svc-signature-version'].required).toBe(false);
      expect(parameters['x-svc-timestamp'].required).toBe(false);
      expect(parameters['x-svc-signature'].description).toContain('HMAC-SHA256');
      expect(parameters['x-svc-signature-alg'].schema.const).toBe('hmac-sha256');
      expect(Object.keys(post.responses)).toEqual(['2XX', 'default']);
    }
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toContain('Webhook events');
  });

  it('describes each event body exactly', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
    const validate = (name: string, body: unknown) => ajv.validate(doc.components.schemas[name], body);
    const base = {
      id: 'evt_01hx7w3d5k8m2q4r6t8v0y2z4a',
      occurredAt: '2026-11-22T09:00:00.000Z',
      resourceType: 'site-visits',
      resourceId: 'visit_01hx7w3d5k8m2q4r6t8v0y2z4b',
      payloadVersion: '2026-11-01',
    };
    const common = { clientTicketNumber: null, clientSiteId: 'S-42', status: 'Scheduled' };
    const scheduled = {
      ...base,
      type: 'job.scheduled',
      data: { ...common, scheduledDate: '2026-11-24', etaTime: '09:30' },
    };
    expect(validate('JobScheduledEvent', scheduled)).toBe(true);
    expect(validate('JobScheduledEvent', { ...scheduled, data: { ...scheduled.data, etaTime: null } })).toBe(true);
    expect(validate('JobScheduledEvent', { ...scheduled, data: { ...scheduled.data, etaTime: '9:30' } })).toBe(false);
    expect(validate('JobScheduledEvent', { ...scheduled, data: { ...common, scheduledDate: '2026-11-24' } })).toBe(
      false,
    );
    const created = { ...common, status: 'New' };
    expect(validate('TicketCreatedEvent', { ...base, type: 'ticket.created', data: created })).toBe(true);
    expect(validate('TicketCreatedEvent', { ...base, type: 'ticket.created', data: { ...created, extra: 1 } })).toBe(
      false,
    );
    expect(
      validate('RepAssignedEvent', {
        ...base,
        type: 'rep.assigned',
        data: { ...common, fieldRepName: 'Awaiting reassignment' },
      }),
    ).toBe(true);
    expect(
      validate('DeliverablesTransmittedEvent', {
        ...base,
        type: 'deliverables.transmitted',
        data: { ...common, status: 'Completed', notes: null },
      }),
    ).toBe(true);
    expect(
      validate('JobCompletedEvent', { ...base, type: 'job.dispatched', data: { ...common, status: 'Completed' } }),
    ).toBe(false);
    // data.status is the status the event leaves the visit in.
    expect(validate('TicketCreatedEvent', { ...base, type: 'ticket.created', data: common })).toBe(false);
    expect(
      validate('JobDispatchedEvent', { ...base, type: 'job.dispatched', data: { ...common, status: 'Dispatched' } }),
    ).toBe(true);
    expect(validate('JobDispatchedEvent', { ...base, type: 'job.dispatched', data: common })).toBe(false);
    expect(
      validate('DeliverablesTransmittedEvent', {
        ...base,
        type: 'deliverables.transmitted',
        data: { ...common, notes: null },
      }),
    ).toBe(false);
    expect(
      validate('RepAssignedEvent', {
        ...base,
        type: 'rep.assigned',
        data: { ...common, status: 'Completed', fieldRepName: 'Jo' },
      }),
    ).toBe(false);
  });
});

describe('what the HTTP server answers before any operation runs: 408 and 431', () => {
  it('is declared on every operation of both documents, as a problem with its type and the timeout', async () => {
    const admin = (await t.http.get('/admin/v1/openapi.json', { token: t.adminToken })).body;
    const seconds = `within ${t.config.requestTimeoutMs / 1000} seconds`;
    let operations = 0;
    for (const document of [doc, admin]) {
      for (const [method, path, op] of allOperations(document)) {
        operations += 1;
        for (const [status, slug] of [
          ['408', 'request-timeout'],
          ['431', 'headers-too-large'],
        ] as const) {
          const where = `${method} ${path} ${status}`;
          const response = op.responses[status];
          expect(response, where).toBeDefined();
          expect(response.content, where).toEqual({
            'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
          });
          expect(response.description, where).toContain(`Problem types: ${slug}.`);
          expect(response.headers, where).toBeUndefined();
        }
        expect(op.responses['408'].description, `${method} ${path}`).toContain(seconds);
      }
    }
    expect(operations).toBeGreaterThan(40);
    // The token endpoint's other errors are OAuth's; these say why they are not.
    expect(operation('POST', '/api/v1/oauth/token').responses['431'].description).toContain('not an OAuth error');
    expect(doc.info.description.replace(/\s+/g, ' ')).toContain(
      `408 \`request-timeout\` when the request has not arrived completely ${seconds}`,
    );
  });
});

describe('the operator document', () => {
  it('holds only /admin/v1 operations, all behind the operator token', async () => {
    const response = await t.http.get('/admin/v1/openapi.json', { token: t.adminToken });
    expect(response.status).toBe(200);
    const admin = response.body;
    expect(admin.openapi).toBe('3.1.0');
    expect(admin.info.version).toBe('1.0.0');
    expect(admin.servers).toEqual(doc.servers);
    expect(admin.components.securitySchemes).toEqual({
      operatorToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(admin.webhooks).toBeUndefined();
    const operations = allOperations(admin);
    expect(operations.map(([method, path]) => `${method} ${path}`)).toEqual(
      expect.arrayContaining(['post /admin/v1/tenants', 'get /admin/v1/tenants/{tenantId}']),
    );
    for (const [method, path, op] of operations) {
      expect(path.startsWith('/admin/v1/'), path).toBe(true);
      expect(op.security, `${method} ${path}`).toEqual([{ operatorToken: [] }]);
      expect(op.responses['401'], `${method} ${path}`).toBeDefined();
      // Not the client API's rate limit: an address that sent too many wrong operator tokens.
      expect(op.responses['429'], `${method} ${path}`).toBeDefined();
      expect(op.responses['429'].headers?.['Retry-After']?.required, `${method} ${path}`).toBe(true);
      expect(op.responses['429'].headers?.['X-RateLimit-Limit'], `${method} ${path}`).toBeUndefined();
    }
    expect(admin.paths['/admin/v1/openapi.json']).toBeUndefined();
    // Every tag an operation uses is declared with a description (Redocly's tag-description rule).
    const declared = new Map(
      admin.tags.map((tag: { name: string; description?: string }) => [tag.name, tag.description]),
    );
    for (const [method, path, op] of operations)
      for (const tag of op.tags) expect(declared.get(tag), `${method} ${path} tag ${tag}`).toBeTruthy();
  });

  it('documents the visit workflow: one strict body per action, the operator view of a visit', async () => {
    const admin = (await t.http.get('/admin/v1/openapi.json', { token: t.adminToken })).body;
    const workflow = admin.paths['/admin/v1/site-visits/{visitId}/workflow'].post;
    const body = workflow.requestBody.content['application/json'].schema;
    expect(body.oneOf.map((branch: any) => branch.properties.action.const)).toEqual([
      'assign-rep',
      'schedule',
      'dispatch',
      'complete',
      'transmit-deliverables',
    ]);
    for (const branch of body.oneOf) {
      expect(branch.additionalProperties).toBe(false);
      expect(branch.required).toContain('action');
    }
    expect(Object.keys(workflow.responses)).toEqual(expect.arrayContaining(['200', '401', '404', '409', '422']));
    const visit = deref(
      deref(workflow.responses['200'].content['application/json'].schema, admin).properties.data,
      admin,
    );
    expect(Object.keys(visit.properties.attributes.properties)).toEqual(
      expect.arrayContaining([
        'status',
        'assetsToService',
        'siteVisitAssets',
        'fieldRepName',
        'scheduledDate',
        'etaTime',
      ]),
    );
    const create = admin.paths['/admin/v1/tenants/{tenantId}/site-visits'].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '401', '404', '409', '422']));
    // The client's visit shows none of the workflow's fields.
    const clientVisit = deref(
      deref(operation('GET', '/api/v1/site-visits/{id}').responses['200'].content['application/json'].schema).properties
        .data,
    );
    expect(Object.keys(clientVisit.properties.attributes.properties)).not.toContain('fieldRepName');
  });
});
