/**
 * Values whose JSON type is right but which no database column holds as sent (issue 15 item 5), tried on
 * every operation of both OpenAPI documents (client and operator): lone surrogates in every string member
 * of every JSON body (each oneOf branch too) and in a member name; query bytes that are not UTF-8 in every
 * string query parameter; date-times outside 1900-01-01T00:00:00Z..9999-12-31T23:59:59Z (in UTC) in every
 * date-time of a body or query; integer parameters not in plain digits (`0x10`, `1e1`, `+5`, ...). Each is
 * a 422 naming the field (a member name: the body, with the character described, not repeated; paths that are
 * not UTF-8: a 400 problem before routing; the token endpoint: 400
 * invalid_request), never a 5xx, and changes nothing; date-times at the edges are stored and answered exactly.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clientOpenApiDocument, operatorOpenApiDocument } from '../../src/http/openapi.js';
import type { TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { visitBody } from '../helpers/visits.js';
import { type ClientFixture, ownId, startClientFixture, tenantState, validBody } from './lib/client-fixture.js';
import { reportFigure } from './lib/figures.js';
import { type ClientOperation, documentOperations } from './lib/operations.js';

/** A high surrogate at the end, a low one at the start, a pair in the wrong order. */
const LONE_SURROGATES = ['Ab\ud800', '\udfffAb', 'A\udc00\ud800b'];
/** An encoded surrogate (both halves), a byte that is never UTF-8, an overlong `/`, a cut sequence, beyond U+10FFFF. */
const NOT_UTF8 = ['%ED%A0%80', '%ED%BF%BF', '%FF', '%C0%AF', '%C3%28', '%F4%90%80%80'];
const OUTSIDE_RANGE = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+14:00',
  '1899-12-31T23:59:59.999Z',
  '1900-01-01T00:00:00+00:01',
  '9999-12-31T23:59:59.001Z',
  '9999-12-31T23:59:59-00:01',
  '2016-12-31T23:59:60Z',
];
const SPELLINGS = ['0x10', '1e1', '+5', ' 5', '5.0', '0b1', 'Infinity', ''];

interface Tally {
  sent: number;
  expected: number;
}
const tallies: Record<'body' | 'query' | 'path' | 'dates' | 'integers' | 'token', Tally> = {
  body: { sent: 0, expected: 0 },
  query: { sent: 0, expected: 0 },
  path: { sent: 0, expected: 0 },
  dates: { sent: 0, expected: 0 },
  integers: { sent: 0, expected: 0 },
  token: { sent: 0, expected: 0 },
};
const failures: string[] = [];
let serverErrors = 0;

let t: TestApp;
let m: ClientFixture;
beforeAll(async () => ({ t, m } = await startClientFixture()));
afterAll(async () => t?.close());

type Schema = Record<string, any>;
interface Api {
  document: Schema;
  token: () => string;
  operations: ClientOperation[];
}

function resolve(document: Schema, schema: Schema): Schema {
  const ref = schema.$ref as string | undefined;
  return ref ? document.components.schemas[ref.split('/').pop()!] : schema;
}

const isString = (schema: Schema) => [schema.type].flat().includes('string');

function pathFor(operation: ClientOperation, value?: string): string {
  return operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (value !== undefined) return value;
    const id = { tenantId: m.tenantId, visitId: m.visitId, projectId: String(m.projectId) }[name];
    return encodeURIComponent(id ?? ownId(operation.path, m));
  });
}

/** Records one hostile request: its tally, and a failure unless `ok`. */
function record(kind: keyof typeof tallies, label: string, response: TestResponse, ok: boolean): void {
  tallies[kind].sent++;
  if (response.status >= 500) serverErrors++;
  if (ok) tallies[kind].expected++;
  else failures.push(`${label} → ${response.status} ${response.text.slice(0, 300)}`);
}

function namesField(response: TestResponse, field: string): boolean {
  return (
    response.status === 422 &&
    /\/validation-error$/.test(response.body?.type) &&
    response.contentType.startsWith('application/problem+json') &&
    Array.isArray(response.body.errors?.[field])
  );
}

/** The JSON bodies of an operation: one base per oneOf branch (its tag set), with the branch's properties. */
function bodyShapes(api: Api, operation: ClientOperation): Array<{ base: Schema; properties: Schema }> {
  const content = operation.operation.requestBody?.content?.['application/json'];
  if (!content || operation.operationId === 'createToken') return [];
  const schema = resolve(api.document, content.schema);
  const valid = validBody(operation, m) ?? {};
  if (!schema.oneOf) return [{ base: valid, properties: schema.properties ?? {} }];
  return (schema.oneOf as Schema[]).map((branch) => {
    const resolved = resolve(api.document, branch);
    const tag = Object.entries(resolved.properties as Schema).find(([, property]) => property.const !== undefined);
    return { base: tag ? { [tag[0]]: tag[1].const } : {}, properties: resolved.properties };
  });
}

async function send(api: Api, operation: ClientOperation, path: string, json?: unknown): Promise<TestResponse> {
  return t.http.request(operation.method, path, { token: api.token(), ...(json !== undefined ? { json } : {}) });
}

async function hostileBodies(api: Api, operation: ClientOperation): Promise<void> {
  for (const { base, properties } of bodyShapes(api, operation)) {
    for (const [name, property] of Object.entries(properties as Record<string, Schema>)) {
      const label = `${operation.method} ${operation.path} ${name}`;
      const items = property.type === 'array' ? resolve(api.document, property.items ?? {}) : undefined;
      if (isString(property) || (items && isString(items))) {
        for (const bad of LONE_SURROGATES) {
          const response = await send(api, operation, pathFor(operation), { ...base, [name]: items ? [bad] : bad });
          record(
            'body',
            `${label}=${JSON.stringify(bad)}`,
            response,
            namesField(response, items ? `${name}[0]` : name),
          );
        }
      }
      if (property.format === 'date-time') {
        for (const value of OUTSIDE_RANGE) {
          const response = await send(api, operation, pathFor(operation), { ...base, [name]: value });
          record('dates', `${label}=${value}`, response, namesField(response, name));
        }
      }
    }
    // A member name is not repeated when it holds a lone surrogate (src/http/request-names.ts): the body is named,
    // with the character's code point and place.
    const response = await send(api, operation, pathFor(operation), { ...base, 'name\ud800': 'x' });
    const described =
      namesField(response, 'body') &&
      (response.body.errors.body as string[]).some((error) => error.includes('U+D800 at character 5')) &&
      !response.text.includes('\\ud800');
    record('body', `${operation.method} ${operation.path} member name`, response, described);
  }
}

async function hostileParameters(api: Api, operation: ClientOperation): Promise<void> {
  const parameters = (operation.operation.parameters ?? []) as Schema[];
  for (const { name, in: where, schema } of parameters) {
    const label = `${operation.method} ${operation.path} ${where} ${name}`;
    const query = (value: string) => `${pathFor(operation)}?${encodeURIComponent(name)}=${value}`;
    if (where === 'query' && isString(schema)) {
      for (const bytes of NOT_UTF8) {
        const response = await send(api, operation, query(bytes));
        record('query', `${label}=${bytes}`, response, namesField(response, name));
      }
    }
    if (where === 'query' && schema.format === 'date-time') {
      for (const value of OUTSIDE_RANGE) {
        const response = await send(api, operation, query(encodeURIComponent(value)));
        record('dates', `${label}=${value}`, response, namesField(response, name));
      }
    }
    if (where === 'query' && schema.type === 'integer') {
      for (const spelling of SPELLINGS) {
        const response = await send(api, operation, query(encodeURIComponent(spelling)));
        record('integers', `${label}=${JSON.stringify(spelling)}`, response, namesField(response, name));
      }
    }
  }
  if (operation.path.includes('{')) {
    for (const bytes of NOT_UTF8.slice(0, 3)) {
      const response = await send(api, operation, pathFor(operation, `x${bytes}`), validBody(operation, m));
      const malformed = response.status === 400 && /\/malformed-request$/.test(response.body?.type);
      record('path', `${operation.method} ${operation.path} ${bytes}`, response, malformed);
    }
  }
}

async function hostileTokenRequests(): Promise<void> {
  const valid = { grant_type: 'client_credentials', client_id: m.clientId, client_secret: m.clientSecret };
  const invalidRequest = (response: TestResponse) =>
    response.status === 400 && response.body?.error === 'invalid_request';
  for (const name of ['client_id', 'client_secret', 'scope']) {
    for (const bad of LONE_SURROGATES) {
      const response = await t.http.post('/api/v1/oauth/token', { json: { ...valid, [name]: bad } });
      record('token', `token JSON ${name}`, response, invalidRequest(response));
    }
    for (const bytes of NOT_UTF8) {
      const fields = Object.entries({ ...valid, [name]: 'x' }).map(
        ([key, value]) => `${key}=${encodeURIComponent(value)}`,
      );
      const form = fields.map((field) => (field === `${name}=x` ? `${field}${bytes}` : field)).join('&');
      const response = await t.http.post('/api/v1/oauth/token', {
        body: form,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      record('token', `token form ${name}=${bytes}`, response, invalidRequest(response));
    }
  }
}

/** Everything a rejected request could have changed: the tenant as the client API and the operator API show it. */
async function state(): Promise<string> {
  const operator = [`/admin/v1/tenants/${m.tenantId}`, `/admin/v1/tenants/${m.tenantId}/projects`, '/admin/v1/tenants'];
  const texts = await Promise.all(operator.map(async (path) => (await t.http.get(path, { token: t.adminToken })).text));
  return [await tenantState(t, m), ...texts].join('\n');
}

it('refuses values the database cannot hold on every operation, naming the field; edge date-times kept exactly', {
  timeout: 300_000,
}, async () => {
  const apis: Api[] = [
    { document: clientOpenApiDocument(t.app), token: () => m.fullToken, operations: [] },
    { document: operatorOpenApiDocument(t.app), token: () => t.adminToken, operations: [] },
  ];
  const before = await state();
  for (const api of apis) {
    api.operations = documentOperations(api.document);
    for (const operation of api.operations.filter((each) => each.operationId !== 'createToken')) {
      await hostileBodies(api, operation);
      await hostileParameters(api, operation);
    }
  }
  await hostileTokenRequests();
  const changed = (await state()) !== before;

  // The edges of the range, written with offsets, are stored and answered as the same instants in UTC.
  const edges = { startDate: '1899-12-31T23:00:00-01:00', dueDate: '9999-12-31T22:59:59-01:00' };
  const created = await t.http.post('/api/v1/site-visits', { token: m.fullToken, json: visitBody(m, edges) });
  const read = await t.http.get(`/api/v1/site-visits/${created.body?.data?.id}`, { token: m.fullToken });
  const exact = [created, read].filter(
    (response) =>
      response.body?.data?.attributes?.startDate === '1900-01-01T00:00:00.000Z' &&
      response.body?.data?.attributes?.dueDate === '9999-12-31T23:59:59.000Z',
  ).length;

  const all = Object.values(tallies).reduce((sum, tally) => sum + tally.sent, 0);
  const of = (tally: Tally) => `${tally.expected}/${tally.sent}`;
  reportFigure(
    'values',
    `${all} hostile values over ${apis.reduce((sum, api) => sum + api.operations.length, 0)} operations: ` +
      `${of(tallies.body)} lone surrogates in body strings and member names, ${of(tallies.query)} non-UTF-8 query values, ` +
      `${of(tallies.dates)} date-times outside 1900..9999 UTC, ${of(tallies.integers)} integer spellings (0x10, 1e1, +5, …) ` +
      `answered 422 naming the field; ${of(tallies.path)} non-UTF-8 paths 400; ${of(tallies.token)} token requests invalid_request; ` +
      `${serverErrors} 5xx, ${changed ? 'STATE CHANGED' : '0 state changes'}; ${exact}/2 edge date-times answered exactly`,
  );
  expect(failures).toEqual([]);
  expect(serverErrors).toBe(0);
  expect(changed).toBe(false);
  expect(exact).toBe(2);
  for (const tally of Object.values(tallies)) expect(tally.sent).toBeGreaterThan(0);
});
