/**
 * Values whose JSON type is right but which no database column holds as sent (issue 15 item 5):
 * date-times outside 1900-01-01T00:00:00Z..9999-12-31T23:59:59Z (in UTC), text with lone surrogates or
 * query bytes that are not UTF-8, and integer parameters not written in plain digits. Each is a 422
 * naming the field, before anything reaches the database; the values at the edges are stored and
 * answered exactly. Runs on PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOpenApiDocument } from '../../src/http/openapi.js';
import { DATE_TIME_MESSAGE, DIGITS_MESSAGE, ILL_FORMED_MESSAGE } from '../../src/http/request-values.js';
import type { TestApp } from '../helpers/app.js';
import { expectInvalid, expectOAuthError, expectProblem } from '../helpers/problems.js';
import { admin, siteBody } from '../helpers/tenants.js';
import { createVisit, operatorCreateVisit, postVisit, startVisitApp, type VisitTenant } from '../helpers/visits.js';

let t: TestApp;
let v: VisitTenant;
beforeAll(async () => ({ t, v } = await startVisitApp()));
afterAll(async () => t?.close());

describe('date-times: 1900-01-01T00:00:00Z through 9999-12-31T23:59:59Z, compared in UTC', () => {
  const OUTSIDE = [
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+14:00',
    '0099-01-01T00:00:00Z',
    '1899-12-31T23:59:59.999Z',
    '1900-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59.001Z',
    '9999-12-31T23:59:59-00:01',
  ];

  it.each(OUTSIDE)('%s as startDate or dueDate is 422 naming the field, on create and patch', async (value) => {
    const start = expectInvalid(await postVisit(t, v, { startDate: value, dueDate: '9999-12-31T23:59:59Z' }), [
      'startDate',
    ]);
    expect(start.startDate).toEqual([DATE_TIME_MESSAGE]);
    expectInvalid(await postVisit(t, v, { startDate: '1900-01-01T00:00:00Z', dueDate: value }), ['dueDate']);
    expectInvalid(await operatorCreateVisit(t, v, { startDate: value }), ['startDate']);
    const visit = await createVisit(t, v);
    expectInvalid(
      await t.http.patch(`/api/v1/site-visits/${visit.id}`, { token: v.fullToken, json: { dueDate: value } }),
      ['dueDate'],
    );
  });

  it('the edges are stored and answered as the same instants in UTC', async () => {
    const created = await postVisit(t, v, {
      startDate: '1899-12-31T23:00:00-01:00',
      dueDate: '9999-12-31T22:59:59-01:00',
    });
    expect(created.status, created.text).toBe(201);
    const read = await t.http.get(`/api/v1/site-visits/${created.body.data.id}`, { token: v.fullToken });
    for (const response of [created, read]) {
      expect(response.body.data.attributes.startDate).toBe('1900-01-01T00:00:00.000Z');
      expect(response.body.data.attributes.dueDate).toBe('9999-12-31T23:59:59.000Z');
    }
  });

  it('a date-time query parameter has the same range', async () => {
    expectInvalid(await admin(t, 'GET', '/admin/v1/deliveries?createdFrom=0000-01-01T00:00:00Z'), ['createdFrom']);
    expectInvalid(await admin(t, 'GET', `/admin/v1/deliveries?createdBefore=${encodeURIComponent('+10000-01-01')}`), [
      'createdBefore',
    ]);
    // JavaScript cannot read these RFC 3339 forms: they were a 500 once the filter reached the database.
    for (const value of ['2016-12-31T23:59:60Z', '2026-11-22T09:00:00+01']) {
      const query = new URLSearchParams({ createdFrom: value });
      expectInvalid(await admin(t, 'GET', `/admin/v1/deliveries?${query}`), ['createdFrom']);
    }
    const edges = new URLSearchParams({ createdFrom: '1900-01-01T00:00:00Z', createdBefore: '9999-12-31T23:59:59Z' });
    expect((await admin(t, 'GET', `/admin/v1/deliveries?${edges}`)).status).toBe(200);
  });
});

describe('text: lone surrogates and bytes that are not UTF-8', () => {
  it('a lone surrogate in any string of a body is 422 naming the field', async () => {
    const token = v.fullToken;
    const name = expectInvalid(await t.http.post('/api/v1/sites', { token, json: siteBody({ name: 'a\ud800b' }) }), [
      'name',
    ]);
    expect(name.name).toEqual([ILL_FORMED_MESSAGE]);
    expectInvalid(await postVisit(t, v, { description: 'x\udfff' }), ['description']);
    expectInvalid(await t.http.patch(`/api/v1/sites/${v.siteId}`, { token, json: { city: '\udbff' } }), ['city']);
    // A member named by a lone surrogate is not repeated (request-names.ts): it is filed under the body.
    const member = expectInvalid(
      await t.http.post('/api/v1/sites', { token, json: { ...siteBody(), '\udc00': 'x' } }),
      ['body'],
    );
    expect(member.body!.join(' ')).toMatch(/U\+DC00 at character 1/);
    const subscription = {
      targetUrl: 'https://hooks.example.com/x',
      eventTypes: ['ticket.created'],
      secret: 'a secret of sixteen+',
    };
    expectInvalid(
      await t.http.post('/api/v1/webhook-subscriptions', {
        token,
        json: { ...subscription, secret: `${'s'.repeat(16)}\ud83d` },
      }),
      ['secret'],
    );
  });

  it('is named beside the other failures of the body', async () => {
    const { city: _city, ...withoutCity } = siteBody({ name: 'a\ud800b' });
    expectInvalid(await t.http.post('/api/v1/sites', { token: v.fullToken, json: withoutCity }), ['city', 'name']);
  });

  it('the siteCodes SC-\\ud800 and SC-\\udfff are both refused, so they cannot collide as SC-\\ufffd', async () => {
    for (const siteCode of ['SC-\ud800', 'SC-\udfff']) {
      expectInvalid(await t.http.post('/api/v1/sites', { token: v.fullToken, json: siteBody({ siteCode }) }), [
        'siteCode',
      ]);
    }
    const found = await t.http.get('/api/v1/sites', { token: v.fullToken, query: { siteCode: 'SC-\ufffd' } });
    expect(found.body.data).toEqual([]);
  });

  it('text with surrogate pairs (outside the BMP) is stored and answered as sent', async () => {
    const created = await t.http.post('/api/v1/sites', {
      token: v.fullToken,
      json: siteBody({ name: 'Store 😀 \ud83d\ude80' }),
    });
    expect(created.status, created.text).toBe(201);
    const read = await t.http.get(`/api/v1/sites/${created.body.data.id}`, { token: v.fullToken });
    expect(read.body.data.attributes.name).toBe('Store 😀 🚀');
  });

  it('query bytes that are not UTF-8 are 422 naming the parameter; valid escapes are read as text', async () => {
    const token = v.fullToken;
    for (const bytes of ['%ED%A0%80', '%ED%BF%BF', '%FF', 'SC-%C3%28', '%C0%AF', '%F4%90%80%80']) {
      const response = await t.http.get(`/api/v1/sites?siteCode=${bytes}`, { token });
      expect(expectInvalid(response, ['siteCode']).siteCode).toEqual([ILL_FORMED_MESSAGE]);
    }
    // As long as a request line may be: 2,400 ill-formed sequences in one value, 1,100 values of one byte.
    expectInvalid(await t.http.get(`/api/v1/sites?siteCode=${'%C3%28'.repeat(2_400)}`, { token }), ['siteCode']);
    const repeated = await t.http.get(`/api/v1/sites?${'siteCode=%FF&'.repeat(1_100)}`, { token });
    expect(Object.keys(expectProblem(repeated, 422, 'validation-error'))).toContain('siteCode');
    expectInvalid(await t.http.get('/api/v1/site-visits?page[after]=%ED%A0%80', { token }), ['page[after]']);
    expectProblem(await t.http.get('/api/v1/sites?%FF=1', { token }), 422, 'validation-error');
    for (const text of ['%F0%9F%98%80', '100%25', '%zz']) {
      expect((await t.http.get(`/api/v1/sites?siteCode=${text}`, { token })).status, text).toBe(200);
    }
  });

  it('path bytes that are not UTF-8 are refused before routing, as any malformed path', async () => {
    for (const bytes of ['%ED%A0%80', '%FF', '%C3%28']) {
      const response = await t.http.get(`/api/v1/sites/site_${bytes}`, { token: v.fullToken });
      expectProblem(response, 400, 'malformed-request');
    }
  });

  it('the token endpoint answers invalid_request for them, in JSON and in a form', async () => {
    const body = { grant_type: 'client_credentials', client_id: `${v.clientId}\ud800`, client_secret: v.clientSecret };
    expectOAuthError(await t.http.post('/api/v1/oauth/token', { json: body }), 400, 'invalid_request');
    const form = `grant_type=client_credentials&client_id=${v.clientId}%ED%A0%80&client_secret=x`;
    const response = await t.http.post('/api/v1/oauth/token', {
      body: form,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectOAuthError(response, 400, 'invalid_request');
  });
});

describe('integer parameters in plain digits', () => {
  const SPELLINGS = ['0x10', '1e1', '+5', ' 5', '5.0', '0b1', 'Infinity'];

  it('page[size] other than plain digits is 422 on every list', async () => {
    const document = clientOpenApiDocument(t.app) as unknown as { paths: Record<string, Record<string, any>> };
    const lists = Object.entries(document.paths)
      .filter(([, item]) =>
        item.get?.parameters?.some((parameter: { name: string }) => parameter.name === 'page[size]'),
      )
      .map(([path]) => path);
    expect(lists).toEqual(expect.arrayContaining(['/api/v1/sites', '/api/v1/site-visits', '/api/v1/messages']));
    for (const path of lists) {
      for (const spelling of SPELLINGS) {
        const response = await t.http.get(path, { token: v.fullToken, query: { 'page[size]': spelling } });
        expect(expectInvalid(response, ['page[size]'])['page[size]'], `${path} ${spelling}`).toEqual([DIGITS_MESSAGE]);
      }
      const plain = await t.http.get(path, { token: v.fullToken, query: { 'page[size]': '05' } });
      expect(plain.status, `${path} ${plain.text}`).toBe(200);
      expect(plain.body.meta.pageSize).toBe(5);
    }
  });

  it("the operator's integer parameters too", async () => {
    for (const spelling of SPELLINGS) {
      const query = new URLSearchParams({ limit: spelling });
      expectInvalid(await admin(t, 'GET', `/admin/v1/deliveries?${query}`), ['limit']);
      expectInvalid(await admin(t, 'GET', `/admin/v1/tenants/${v.tenantId}/site-visits?${query}`), ['limit']);
    }
    expect((await admin(t, 'GET', `/admin/v1/tenants/${v.tenantId}/site-visits?limit=2`)).status).toBe(200);
  });
});
