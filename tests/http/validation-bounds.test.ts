/**
 * The cost of a refused body is bounded (issue 15, item 1): every list and map of every request body has a
 * documented size bound; a body over one is refused naming that bound alone, without its items; a problem
 * names at most 50 fields and counts the others; a body longer than its route's schema admits is 413
 * unread; a body whose structure would be costly to parse is refused unparsed; and whatever the body up
 * to the 1 MiB body limit, the problem stays under 64 KiB. (How fast: tests/reliability/validation-flood.rel.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS, MAX_JSON_VALUES } from '../../src/http/json-body.js';
import type { TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectInvalid } from '../helpers/problems.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, postVisit, startVisitApp, visitBody, type VisitTenant } from '../helpers/visits.js';

const BODY_LIMIT = 1024 * 1024;
const MAX_PROBLEM_BYTES = 64 * 1024;
const CAP = 50;

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => ({ t, v } = await startVisitApp()));
afterAll(async () => t?.close());

/** Sends a body as given (JSON text), checking it is within the body limit. */
function send(method: string, path: string, text: string, token = v.token): Promise<TestResponse> {
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(BODY_LIMIT);
  return t.http.request(method, path, { token, body: text, headers: { 'content-type': 'application/json' } });
}

/** A 422 problem of at most 64 KiB; returns its errors. */
function expectBoundedProblem(response: TestResponse, fields?: string[]): Record<string, string[]> {
  expect(Buffer.byteLength(response.text)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
  return expectInvalid(response, fields ?? Object.keys(response.body.errors ?? {}));
}

/** `{…, "<name>": [<item>, <item>, …]}`: `count` copies of a wrong item in one member of a valid body. */
function withItems(body: object, member: string, item: string, count: number): string {
  const text = JSON.stringify({ ...body, [member]: [] });
  const marker = `"${member}":[]`;
  return text.replace(marker, `"${member}":[${Array(count).fill(item).join(',')}]`);
}

/** `count` unknown members named by `name(index)` in an object whose other members are `body`'s. */
function withUnknownMembers(body: object, count: number, name: (index: number) => string): string {
  const members = Array.from({ length: count }, (_, index) => `${JSON.stringify(name(index))}:0`).join(',');
  const text = JSON.stringify(body);
  return `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${members}}`;
}

describe('a list over its bound is refused by its bound alone', () => {
  it('2,000 wrong siteAssetIds: one error, the bound', async () => {
    const response = await send('POST', '/api/v1/site-visits', withItems(visitBody(v), 'siteAssetIds', '"x"', 2_000));
    const errors = expectBoundedProblem(response, ['siteAssetIds']);
    expect(errors.siteAssetIds).toEqual(['must have at most 200 entries']);
    expect(response.body.errorsOmitted).toBeUndefined();
  });

  it('10,000 eventTypes: at most the seven event types', async () => {
    const subscription = { targetUrl: 'https://hooks.example.com/a', secret: 'a secret of sixteen+' };
    const response = await send(
      'POST',
      '/api/v1/webhook-subscriptions',
      withItems(subscription, 'eventTypes', '"x"', 10_000),
    );
    expect(expectBoundedProblem(response, ['eventTypes']).eventTypes).toEqual(['must have at most 7 entries']);
    // Eight distinct-looking entries are over the bound too; seven valid ones are accepted.
    const eight = await t.http.post('/api/v1/webhook-subscriptions', {
      token: v.token,
      json: { ...subscription, eventTypes: [...Array(7).fill('ticket.created'), 'job.completed'] },
    });
    expectInvalid(eight, ['eventTypes']);
  });

  it('on PATCH too, and on the operator API (scopes at most the six)', async () => {
    const visit = await createVisit(t, v);
    const patch = await t.http.patch(`/api/v1/site-visits/${visit.id}`, {
      token: v.token,
      headers: { 'if-match': visit.meta.etag, 'content-type': 'application/json' },
      body: withItems({}, 'siteAssetIds', '{"a":[1,2,3]}', 2_000),
    });
    expectBoundedProblem(patch, ['siteAssetIds']);
    const tenant = await admin(t, 'POST', '/admin/v1/tenants', {
      name: 'Scoped',
      scopes: Array(7).fill('sites:read'),
    });
    expectInvalid(tenant, ['scopes']);
    expect(tenant.body.errors.scopes).toEqual(['must have at most 6 entries']);
  });

  it('a list within its bound is still checked item by item, with the rest of the body', async () => {
    const response = await postVisit(t, v, { siteAssetIds: ['x', 2, 'y'], serviceType: 'Nope' });
    expectInvalid(response, ['siteAssetIds[0]', 'siteAssetIds[2]', 'serviceType']);
  });
});

describe('a problem names at most 50 fields and counts the others', () => {
  it('200 wrong siteAssetIds (within the bound): 50 named, errorsOmitted the rest, detail not all', async () => {
    const response = await postVisit(t, v, { siteAssetIds: Array(200).fill('x'), description: '' });
    const errors = expectBoundedProblem(response);
    expect(Object.keys(errors)).toHaveLength(CAP);
    expect(errors.description).toEqual(['must not be empty']);
    expect(response.body.errorsOmitted).toBe(201 - CAP);
    expect(response.body.detail).toContain('201 invalid fields');
    expect(response.body.detail).toContain(`${201 - 10} more; errors names the first ${CAP}`);
    expect(response.body.detail.match(/siteAssetIds\[/g)?.length ?? 0).toBeLessThanOrEqual(10);
  });

  it('fewer than 50 failing fields: each named in errors, none omitted', async () => {
    const response = await postVisit(t, v, { siteAssetIds: Array(30).fill('x') });
    expect(Object.keys(expectBoundedProblem(response))).toHaveLength(30);
    expect(response.body.errorsOmitted).toBeUndefined();
    expect(response.body.detail).toContain('30 invalid fields');
  });

  it('900 unknown members: the first 50 named as unknown, the others counted', async () => {
    const response = await send(
      'POST',
      '/api/v1/site-visits',
      withUnknownMembers(visitBody(v), 900, (index) => `u${index}`),
    );
    const errors = expectBoundedProblem(response);
    expect(Object.keys(errors)).toEqual(Array.from({ length: CAP }, (_, index) => `u${index}`));
    expect(errors.u0).toEqual(['is not a known field']);
    expect(response.body.errorsOmitted).toBe(900 - CAP);
  });

  it('unknown members with long names of escaped characters: described, not repeated; the problem small', async () => {
    // Each name is 1,000 control characters, written \u0001 (6 bytes) in the request: none is repeated
    // (src/http/request-names.ts); the first is described under body, the others counted.
    const name = (index: number) => `${index}`.padEnd(1_000, '\u0001');
    const text = withUnknownMembers({}, CAP + 1, name);
    const response = await send('POST', '/api/v1/site-visits', text);
    const errors = expectBoundedProblem(response, ['body']);
    expect(errors.body).toEqual([
      'has a member with a name holding a control or invisible character (U+0001 at character 2), not repeated here: is not a known field',
      `has ${CAP - 1} more members whose names are not repeated here either`,
    ]);
    // The 51st is counted by the size check, the 49 by the filing: 50 beyond the one described.
    expect(response.body.errorsOmitted).toBe(CAP);
    expect(Buffer.byteLength(response.text)).toBeLessThan(1_000);
    expect(response.text).not.toMatch(/\\u0001|\u0001/);
  });

  it('a discriminated body (the operator workflow) with a flood of unknown members', async () => {
    const visit = await createVisit(t, v);
    const response = await t.http.request('POST', `/admin/v1/site-visits/${visit.id}/workflow`, {
      token: t.adminToken,
      headers: { 'content-type': 'application/json' },
      body: withUnknownMembers({ action: 'dispatch' }, 900, (index) => `n${index}`),
    });
    expect(Object.keys(expectBoundedProblem(response))).toHaveLength(CAP);
    expect(response.body.errorsOmitted).toBe(900 - CAP);
  });
});

describe('every list and map of every request body has a documented bound', () => {
  /** The arrays without maxItems and open objects without maxProperties of a schema, by path. */
  function unbounded(document: any, schema: any, path: string): string[] {
    const resolved = schema?.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema;
    if (!resolved || typeof resolved !== 'object') return [];
    const found: string[] = [];
    const types = [resolved.type].flat();
    if (types.includes('array')) {
      if (resolved.maxItems === undefined) found.push(`${path}: array without maxItems`);
      found.push(...unbounded(document, resolved.items, `${path}[]`));
    }
    const open = resolved.additionalProperties !== false || resolved.patternProperties;
    // An object of several closed shapes (oneOf) is closed: each shape is checked below.
    if (
      (types.includes('object') || resolved.properties) &&
      open &&
      !resolved.oneOf &&
      resolved.maxProperties === undefined
    )
      found.push(`${path}: open object without maxProperties`);
    for (const [name, member] of Object.entries(resolved.properties ?? {}))
      found.push(...unbounded(document, member, `${path}.${name}`));
    for (const member of Object.values(resolved.patternProperties ?? {}))
      found.push(...unbounded(document, member, `${path}.*`));
    if (typeof resolved.additionalProperties === 'object')
      found.push(...unbounded(document, resolved.additionalProperties, `${path}.*`));
    for (const keyword of ['oneOf', 'anyOf', 'allOf'])
      for (const [index, branch] of (resolved[keyword] ?? []).entries())
        found.push(...unbounded(document, branch, `${path}<${keyword} ${index}>`));
    return found;
  }

  it('in the client and the operator documents (the token endpoint excepted, as RFC 6749 requires)', async () => {
    const client = (await t.http.get('/api/v1/openapi.json')).body;
    const operator = (await t.http.get('/admin/v1/openapi.json', { token: t.adminToken })).body;
    const found: string[] = [];
    let bodies = 0;
    for (const document of [client, operator]) {
      for (const [path, item] of Object.entries(document.paths as Record<string, any>)) {
        for (const [method, op] of Object.entries(item as Record<string, any>)) {
          // The token endpoint checks its form by hand within 16 KiB and ignores unknown parameters.
          if (!op.requestBody || op.operationId === 'createToken') continue;
          for (const [mediaType, media] of Object.entries(op.requestBody.content as Record<string, any>)) {
            if (mediaType.startsWith('multipart/')) continue;
            bodies += 1;
            found.push(...unbounded(document, media.schema, `${method} ${path} body`));
          }
        }
      }
    }
    expect(bodies).toBeGreaterThanOrEqual(15);
    expect(found).toEqual([]);
  });

  it("every JSON body's limit comes from its schema, none is the service's 1 MiB", async () => {
    // The simulator's and the operator's workflow actions took 1 MiB: etaTime had a pattern and no maxLength.
    const client = (await t.http.get('/api/v1/openapi.json')).body;
    const operator = (await t.http.get('/admin/v1/openapi.json', { token: t.adminToken })).body;
    const limits: Record<string, number> = {};
    for (const document of [client, operator])
      for (const [path, item] of Object.entries(document.paths as Record<string, any>))
        for (const [method, op] of Object.entries(item as Record<string, any>)) {
          if (!op.requestBody?.content?.['application/json'] || op.operationId === 'createToken') continue;
          const limit = /at most (\d+) bytes/.exec(op.responses['413']?.description ?? '')?.[1];
          limits[`${method} ${path}`] = Number(limit);
        }
    expect(limits['post /api/v1/sandbox/site-visits/{id}/simulate']).toBeGreaterThan(0);
    expect(Object.entries(limits).filter(([, limit]) => !(limit < BODY_LIMIT))).toEqual([]);
  });
});

describe('a body is read only as far as its route can use it', () => {
  it('longer than the schema admits: 413 before it is read, and the document and the problem name the limit', async () => {
    const document = (await t.http.get('/api/v1/openapi.json')).body;
    const tooLarge = document.paths['/api/v1/site-visits'].post.responses['413'].description as string;
    const limit = Number(/at most (\d+) bytes/.exec(tooLarge)?.[1]);
    expect(limit).toBeGreaterThan(64 * 1024);
    expect(limit).toBeLessThan(BODY_LIMIT);

    const atLimit = withItems(visitBody(v), 'siteAssetIds', '"x"', 1);
    const padded = `${atLimit.slice(0, -1)}${' '.repeat(limit - atLimit.length)}}`;
    expect(Buffer.byteLength(padded)).toBe(limit);
    expectInvalid(await send('POST', '/api/v1/site-visits', padded), ['siteAssetIds[0]']);

    const over = `${padded.slice(0, -1)} }`;
    const response = await send('POST', '/api/v1/site-visits', over);
    expect(response.status).toBe(413);
    expect(response.body.type).toMatch(/payload-too-large$/);
    // The route's limit, not anything of the body: the problem is the same size however large the body.
    expect(response.body.detail).toBe(
      `The request body is larger than this endpoint accepts (at most ${limit} bytes).`,
    );
    expect(tooLarge).toContain(response.body.detail);
  });

  it(`an object of more than ${MAX_JSON_MEMBERS} members, or nesting deeper than ${MAX_JSON_DEPTH}: refused unparsed`, async () => {
    const wide = await send(
      'POST',
      '/api/v1/site-visits',
      withUnknownMembers(visitBody(v), MAX_JSON_MEMBERS, (i) => `u${i}`),
    );
    expect(expectBoundedProblem(wide, ['body']).body).toEqual([
      `has an object of more than ${MAX_JSON_MEMBERS} members`,
    ]);
    const deep = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    const response = await send('POST', '/api/v1/site-visits', withItems(visitBody(v), 'siteAssetIds', deep, 1));
    expect(expectBoundedProblem(response, ['body']).body).toEqual([
      `is nested more than ${MAX_JSON_DEPTH} levels deep`,
    ]);
    // Brackets and commas inside strings are text, not structure.
    const inText = visitBody(v, { description: `${'[{'.repeat(50)}\\"${','.repeat(1_200)}` });
    expect((await send('POST', '/api/v1/site-visits', JSON.stringify(inText))).status).toBe(201);
  });

  it(`more than ${MAX_JSON_VALUES} values, within the route's limit: refused unparsed`, async () => {
    // The probe's body: 160,000 empty objects in 480 KB, within the message create's limit, took 8 ms to parse
    // and 8 MB of objects each; sixteen at once held another client's /health for half a second.
    const document = (await t.http.get('/api/v1/openapi.json')).body;
    const tooLarge = document.paths['/api/v1/messages'].post.responses['413'].description as string;
    const limit = Number(/at most (\d+) bytes/.exec(tooLarge)?.[1]);
    const empties = Math.floor((limit - 100) / 3);
    expect(empties).toBeGreaterThan(100_000);
    const flood = `{"siteVisitId":"visit_x","messageThread":"a","x":[${Array(empties).fill('{}').join(',')}]}`;
    const response = await send('POST', '/api/v1/messages', flood);
    expect(expectBoundedProblem(response, ['body']).body).toEqual([`has more than ${MAX_JSON_VALUES} values`]);
    // The largest valid list is far within it: 200 siteAssetIds are checked one by one as before.
    const assets = await send('POST', '/api/v1/site-visits', withItems(visitBody(v), 'siteAssetIds', '"x"', 200));
    expect(Object.keys(expectBoundedProblem(assets))).toContain('siteAssetIds[0]');
  });
});
