import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

const clock = new ManualClock(new Date('2026-03-01T09:00:00.000Z'));
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => t?.close());

const OPTIONAL_NULLS = {
  addressLine2: null,
  uniqueID: null,
  uniqueID2: null,
  friendlyLocationName: null,
  friendlyLocationName2: null,
  keyRequired: null,
};

describe('POST /api/v1/sites', () => {
  it('creates a site with the required fields: 201, envelope, ETag, every attribute present', async () => {
    const { token, tenantId } = await tenantWithToken(t);
    const body = siteBody();
    const response = await t.http.post('/api/v1/sites', { token, json: body });
    expect(response.status).toBe(201);
    expect(response.headers.get('etag')).toBe('"1"');
    expect(response.headers.get('idempotent-replayed')).toBeNull();
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(/^site_[0-9a-z]{26}$/),
        type: 'sites',
        attributes: {
          ...body,
          ...OPTIONAL_NULLS,
          clientId: tenantId,
          status: 'Active',
          createdAt: '2026-03-01T09:00:00.000Z',
          updatedAt: '2026-03-01T09:00:00.000Z',
        },
        meta: { version: 1, etag: '"1"' },
      },
    });
  });

  it('stores every optional field', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody({
      addressLine2: 'Suite 4',
      uniqueID: 'LEGACY-1',
      uniqueID2: 'LEGACY-2',
      friendlyLocationName: 'Front',
      friendlyLocationName2: 'Back',
      keyRequired: true,
    });
    const created = await t.http.post('/api/v1/sites', { token, json: body });
    expect(created.status).toBe(201);
    expect(created.body.data.attributes).toMatchObject(body);
    const read = await t.http.get(`/api/v1/sites/${created.body.data.id}`, { token });
    expect(read.body).toEqual(created.body);
  });

  it('accepts null for optional fields, meaning no value', async () => {
    const { token } = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', { token, json: siteBody(OPTIONAL_NULLS) });
    expect(created.status).toBe(201);
    expect(created.body.data.attributes).toMatchObject(OPTIONAL_NULLS);
  });

  it('accepts strings at their maximum lengths and non-ASCII text', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody({
      name: 'é'.repeat(200),
      siteCode: `Ω${'c'.repeat(99)}`,
      addressLine1: 'a'.repeat(200),
      addressLine2: 'b'.repeat(200),
      city: 'c'.repeat(100),
      stateRegion: 's'.repeat(100),
      postalCode: 'p'.repeat(20),
      country: 'n'.repeat(100),
      uniqueID: 'u'.repeat(100),
      uniqueID2: 'v'.repeat(100),
      friendlyLocationName: 'f'.repeat(200),
      friendlyLocationName2: 'g'.repeat(200),
    });
    const created = await t.http.post('/api/v1/sites', { token, json: body });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.attributes).toMatchObject(body);
  });

  it('treats siteCode as case-sensitive: ABC and abc are two sites', async () => {
    const { token } = await tenantWithToken(t);
    expect((await t.http.post('/api/v1/sites', { token, json: siteBody({ siteCode: 'ABC' }) })).status).toBe(201);
    expect((await t.http.post('/api/v1/sites', { token, json: siteBody({ siteCode: 'abc' }) })).status).toBe(201);
  });

  it('lets two tenants use the same siteCode', async () => {
    const a = await tenantWithToken(t);
    const b = await tenantWithToken(t);
    expect(
      (await t.http.post('/api/v1/sites', { token: a.token, json: siteBody({ siteCode: 'SHARED-1' }) })).status,
    ).toBe(201);
    expect(
      (await t.http.post('/api/v1/sites', { token: b.token, json: siteBody({ siteCode: 'SHARED-1' }) })).status,
    ).toBe(201);
  });

  it('accepts a JSON content type with a charset', async () => {
    const { token } = await tenantWithToken(t);
    const response = await t.http.post('/api/v1/sites', {
      token,
      body: JSON.stringify(siteBody()),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(response.status).toBe(201);
  });
});

describe('GET /api/v1/sites/{id}', () => {
  it('reads a site with its ETag', async () => {
    const { token } = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', { token, json: siteBody() });
    const read = await t.http.get(`/api/v1/sites/${created.body.data.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe('"1"');
    expect(read.body).toEqual(created.body);
  });

  it('answers HEAD like GET, without a body', async () => {
    const { token } = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', { token, json: siteBody() });
    const head = await t.http.request('HEAD', `/api/v1/sites/${created.body.data.id}`, { token });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('etag')).toBe('"1"');
  });
});

describe('PATCH /api/v1/sites/{id}', () => {
  it('changes only the supplied fields, adds 1 to the version and moves updatedAt', async () => {
    const { token } = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', { token, json: siteBody({ uniqueID: 'U-1' }) });
    const id = created.body.data.id;
    clock.advance(60_000);
    const patched = await t.http.patch(`/api/v1/sites/${id}`, { token, json: { name: 'Renamed', keyRequired: true } });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('etag')).toBe('"2"');
    expect(patched.body.data.meta).toEqual({ version: 2, etag: '"2"' });
    expect(patched.body.data.attributes).toEqual({
      ...created.body.data.attributes,
      name: 'Renamed',
      keyRequired: true,
      updatedAt: new Date(clock.now()).toISOString(),
    });
    expect(patched.body.data.attributes.createdAt).toBe(created.body.data.attributes.createdAt);
    const read = await t.http.get(`/api/v1/sites/${id}`, { token });
    expect(read.body).toEqual(patched.body);
    expect(read.headers.get('etag')).toBe('"2"');
  });

  it('adds exactly 1 per change', async () => {
    const { token } = await tenantWithToken(t);
    const id = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
    for (let version = 2; version <= 5; version++) {
      const patched = await t.http.patch(`/api/v1/sites/${id}`, { token, json: { city: `City ${version}` } });
      expect(patched.body.data.meta.version).toBe(version);
      expect(patched.headers.get('etag')).toBe(`"${version}"`);
    }
  });

  it('does not bump the version for a patch that changes nothing', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody({ keyRequired: false });
    const created = await t.http.post('/api/v1/sites', { token, json: body });
    const id = created.body.data.id;
    clock.advance(1_000);
    for (const patch of [{}, { name: body.name }, { siteCode: body.siteCode, keyRequired: false, uniqueID: null }]) {
      const response = await t.http.patch(`/api/v1/sites/${id}`, { token, json: patch });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('"1"');
      expect(response.body).toEqual(created.body);
    }
  });

  it('clears optional fields with null', async () => {
    const { token } = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', {
      token,
      json: siteBody({
        addressLine2: 'Unit 1',
        uniqueID: 'U',
        uniqueID2: 'V',
        friendlyLocationName: 'F',
        friendlyLocationName2: 'G',
        keyRequired: true,
      }),
    });
    const patched = await t.http.patch(`/api/v1/sites/${created.body.data.id}`, { token, json: OPTIONAL_NULLS });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes).toMatchObject(OPTIONAL_NULLS);
    expect(patched.body.data.meta.version).toBe(2);
  });

  it('changes the siteCode to a free one, and case alone makes it free', async () => {
    const { token } = await tenantWithToken(t);
    const id = (await t.http.post('/api/v1/sites', { token, json: siteBody({ siteCode: 'CODE-X' }) })).body.data.id;
    await t.http.post('/api/v1/sites', { token, json: siteBody({ siteCode: 'CODE-Y' }) });
    const patched = await t.http.patch(`/api/v1/sites/${id}`, { token, json: { siteCode: 'code-y' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes.siteCode).toBe('code-y');
  });

  it('applies a change when If-Match carries the current ETag, a list containing it, or *', async () => {
    const { token } = await tenantWithToken(t);
    const id = (await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id;
    const first = await t.http.patch(`/api/v1/sites/${id}`, {
      token,
      json: { name: 'One' },
      headers: { 'if-match': '"1"' },
    });
    expect(first.status).toBe(200);
    const second = await t.http.patch(`/api/v1/sites/${id}`, {
      token,
      json: { name: 'Two' },
      headers: { 'if-match': '"7", "2"' },
    });
    expect(second.status).toBe(200);
    const third = await t.http.patch(`/api/v1/sites/${id}`, {
      token,
      json: { name: 'Three' },
      headers: { 'if-match': '*' },
    });
    expect(third.status).toBe(200);
    expect(third.body.data.meta.version).toBe(4);
  });
});

describe('GET /api/v1/sites', () => {
  it("lists the tenant's sites oldest first with the default page size", async () => {
    const { token } = await tenantWithToken(t);
    const ids = [];
    for (let index = 0; index < 3; index++)
      ids.push((await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id);
    const list = await t.http.get('/api/v1/sites', { token });
    expect(list.status).toBe(200);
    expect(list.body.meta).toEqual({ pageSize: 25 });
    expect(list.body.data.map((site: { id: string }) => site.id)).toEqual(ids);
    const single = await t.http.get(`/api/v1/sites/${ids[0]}`, { token });
    expect(list.body.data[0]).toEqual(single.body.data);
  });

  it('an empty list for a tenant without sites', async () => {
    const { token } = await tenantWithToken(t);
    const list = await t.http.get('/api/v1/sites', { token });
    expect(list.body).toEqual({ data: [], meta: { pageSize: 25 } });
  });

  it('filters by siteCode, uniqueID or uniqueID2: exact and case-sensitive', async () => {
    const { token } = await tenantWithToken(t);
    const create = async (fields: Record<string, unknown>) =>
      (await t.http.post('/api/v1/sites', { token, json: siteBody(fields) })).body.data.id;
    const a = await create({ siteCode: 'Store-1', uniqueID: 'LEG-1', uniqueID2: 'SEC-1' });
    const b = await create({ siteCode: 'store-1', uniqueID: 'leg-1', uniqueID2: 'SEC-1' });
    await create({ siteCode: 'Store-10', uniqueID: 'LEG-10', uniqueID2: 'SEC-10' });
    const ids = async (query: Record<string, string>) => {
      const response = await t.http.get('/api/v1/sites', { token, query });
      expect(response.status).toBe(200);
      return response.body.data.map((site: { id: string }) => site.id);
    };
    expect(await ids({ siteCode: 'Store-1' })).toEqual([a]);
    expect(await ids({ siteCode: 'store-1' })).toEqual([b]);
    expect(await ids({ siteCode: 'STORE-1' })).toEqual([]);
    expect(await ids({ siteCode: 'Store' })).toEqual([]);
    expect(await ids({ uniqueID: 'LEG-1' })).toEqual([a]);
    expect(await ids({ uniqueID: 'leg-1' })).toEqual([b]);
    expect(await ids({ uniqueID2: 'SEC-1' })).toEqual([a, b]);
    expect(await ids({ uniqueID2: 'sec-1' })).toEqual([]);
    expect(await ids({ siteCode: 'Store-1%' })).toEqual([]);
  });

  it('finds a site by a siteCode with reserved URL characters', async () => {
    const { token } = await tenantWithToken(t);
    const id = (await t.http.post('/api/v1/sites', { token, json: siteBody({ siteCode: 'A&B=C/D?E#F+G %' }) })).body
      .data.id;
    const response = await t.http.get('/api/v1/sites', { token, query: { siteCode: 'A&B=C/D?E#F+G %' } });
    expect(response.body.data.map((site: { id: string }) => site.id)).toEqual([id]);
  });
});
