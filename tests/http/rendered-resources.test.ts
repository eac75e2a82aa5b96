/**
 * Resources rendered once per version (src/http/rendered-resources.ts), over HTTP: a page of sites or
 * messages is exactly what the GETs of its rows answer, at their latest versions, whether the page was
 * rendered before, after a change, or by a process that keeps nothing (LIST_CACHE_MB=0); a GET by id answers
 * the same bytes whether its JSON was held or not, and another tenant's resource is not found even while
 * this process holds its JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, type MessageTenant, uploadAttachment } from '../helpers/messages.js';
import { pdfBytes } from '../helpers/multipart.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
let keepingNothing: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  keepingNothing = await startTestApp({ database: t.database, keys: t.keys, config: { listCacheBytes: 0 } });
});
afterAll(async () => {
  await keepingNothing?.close();
  await t?.close();
});

type Resource = { id: string; meta: { version: number } };

/** The list's first page of `size`, and each of its rows as its GET answers it. */
async function pageAndGets(app: TestApp, path: string, token: string, size = 100) {
  const page = await app.http.get(path, { token, query: { 'page[size]': size } });
  expect(page.status, page.text).toBe(200);
  expect(page.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const gets = await Promise.all(
    (page.body.data as Resource[]).map(async (row) => (await app.http.get(`${path}/${row.id}`, { token })).body.data),
  );
  return { page: page.body, gets };
}

describe('sites listed once rendered', () => {
  it('answers each row as its GET does, before and after a change, and as a process that keeps nothing', async () => {
    const tenant = await tenantWithToken(t);
    const ids: string[] = [];
    for (let at = 0; at < 5; at++) {
      const created = await t.http.post('/api/v1/sites', {
        token: tenant.token,
        json: siteBody({ name: `Site ${at}` }),
      });
      ids.push(created.body.data.id);
    }
    const first = await pageAndGets(t, '/api/v1/sites', tenant.token);
    expect(first.page.data).toEqual(first.gets);

    const patched = await t.http.patch(`/api/v1/sites/${ids[2]}`, { token: tenant.token, json: { name: 'Renamed' } });
    expect(patched.status).toBe(200);
    const second = await pageAndGets(t, '/api/v1/sites', tenant.token);
    expect(second.page.data).toEqual(second.gets);
    expect(second.page.data[2]).toMatchObject({ attributes: { name: 'Renamed' }, meta: { version: 2 } });

    const uncached = await pageAndGets(keepingNothing, '/api/v1/sites', tenant.token);
    expect(uncached.page).toEqual(second.page);
  });

  it('cuts pages and filters exactly as before: the rows of the page asked, in order', async () => {
    const tenant = await tenantWithToken(t);
    const ids: string[] = [];
    for (let at = 0; at < 3; at++) {
      const created = await t.http.post('/api/v1/sites', {
        token: tenant.token,
        json: siteBody({ uniqueID: `U-${at}` }),
      });
      ids.push(created.body.data.id);
    }
    const firstTwo = await t.http.get('/api/v1/sites', { token: tenant.token, query: { 'page[size]': 2 } });
    const rest = await t.http.get('/api/v1/sites', {
      token: tenant.token,
      query: { 'page[size]': 2, 'page[after]': firstTwo.body.meta.nextCursor },
    });
    const filtered = await t.http.get('/api/v1/sites', { token: tenant.token, query: { uniqueID: 'U-1' } });
    expect([...firstTwo.body.data, ...rest.body.data].map((site: Resource) => site.id)).toEqual(ids);
    expect(rest.body.meta).toEqual({ pageSize: 2 });
    expect(filtered.body.data.map((site: Resource) => site.id)).toEqual([ids[1]]);
  });
});

describe('a page asked again', () => {
  it('is the answer sent before while its rows are unchanged, and shows a next page once a row follows it', async () => {
    const tenant = await tenantWithToken(t);
    const created = [];
    for (let at = 0; at < 2; at++) {
      created.push((await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody() })).body.data);
    }
    const ask = () => t.http.get('/api/v1/sites', { token: tenant.token, query: { 'page[size]': 2 } });
    const first = await ask();
    const again = await ask();
    expect(again.text).toBe(first.text);
    expect(first.body.meta).toEqual({ pageSize: 2 });

    await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody() });
    const followed = await ask();
    expect(followed.body.data).toEqual(first.body.data);
    expect(followed.body.meta.nextCursor).toEqual(expect.any(String));

    await t.http.patch(`/api/v1/sites/${created[1].id}`, { token: tenant.token, json: { name: 'Changed' } });
    const changed = await ask();
    expect(changed.body.data[1]).toMatchObject({ attributes: { name: 'Changed' }, meta: { version: 2 } });
    // Another tenant asking the same query gets its own page.
    const other = await tenantWithToken(t);
    const theirs = await t.http.get('/api/v1/sites', { token: other.token, query: { 'page[size]': 2 } });
    expect(theirs.body).toEqual({ data: [], meta: { pageSize: 2 } });
  });
});

describe('messages listed once rendered', () => {
  let m: MessageTenant;
  beforeAll(async () => {
    m = await messageTenant(t);
  });

  it('shows a new attachment version at once: the message version it raised is a new rendering', async () => {
    const message = await createMessage(t, m);
    await createMessage(t, m);
    const before = await pageAndGets(t, '/api/v1/messages', m.token);
    expect(before.page.data).toEqual(before.gets);

    expect((await uploadAttachment(t, m.token, message.id, pdfBytes(3000))).status).toBe(201);
    const after = await pageAndGets(t, '/api/v1/messages', m.token);
    expect(after.page.data).toEqual(after.gets);
    const listed = after.page.data.find((row: Resource) => row.id === message.id);
    expect(listed.meta.version).toBe(message.meta.version + 1);
    expect(before.page.data.find((row: Resource) => row.id === message.id).attributes.fileAttachment).toBeNull();
    expect(listed.attributes.fileAttachment.versions).toHaveLength(1);

    const uncached = await pageAndGets(keepingNothing, '/api/v1/messages', m.token);
    expect(uncached.page).toEqual(after.page);
  });
});

describe('a GET by id rendered once per version', () => {
  /** The GET's status, ETag and exact body, as a client receives them. */
  async function fetched(app: TestApp, path: string, token: string) {
    const response = await app.http.get(path, { token });
    return { status: response.status, etag: response.headers.get('etag'), text: response.text };
  }

  it('answers a site with the same bytes and ETag held or not, its new version after a change, and 404 to another tenant', async () => {
    const tenant = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody({ name: 'Held' }) });
    const path = `/api/v1/sites/${created.body.data.id}`;

    const first = await fetched(t, path, tenant.token);
    const again = await fetched(t, path, tenant.token);
    const uncached = await fetched(keepingNothing, path, tenant.token);
    expect(first).toMatchObject({ status: 200, etag: '"1"' });
    expect(JSON.parse(first.text)).toEqual({ data: created.body.data });
    expect(again).toEqual(first);
    expect(uncached).toEqual(first);

    const patched = await t.http.patch(path, { token: tenant.token, json: { name: 'Changed' } });
    const changed = await fetched(t, path, tenant.token);
    expect(changed.etag).toBe('"2"');
    expect(changed.text).toBe(patched.text);
    expect(JSON.parse(changed.text).data).toMatchObject({ attributes: { name: 'Changed' }, meta: { version: 2 } });
    expect(await fetched(t, path, tenant.token)).toEqual(changed);

    const other = await tenantWithToken(t);
    const theirs = await t.http.get(path, { token: other.token });
    expect(theirs.status).toBe(404);
    expect(theirs.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  });

  it('answers a site a page rendered from that rendering, as its GET would', async () => {
    const tenant = await tenantWithToken(t);
    const created = await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody() });
    await t.http.get('/api/v1/sites', { token: tenant.token });
    const held = await fetched(t, `/api/v1/sites/${created.body.data.id}`, tenant.token);
    expect(held).toEqual(await fetched(keepingNothing, `/api/v1/sites/${created.body.data.id}`, tenant.token));
  });

  it('answers a message at the version a new attachment raised', async () => {
    const m = await messageTenant(t);
    const message = await createMessage(t, m);
    const path = `/api/v1/messages/${message.id}`;
    const before = await fetched(t, path, m.token);
    expect(await fetched(t, path, m.token)).toEqual(before);
    expect(JSON.parse(before.text).data.attributes.fileAttachment).toBeNull();

    expect((await uploadAttachment(t, m.token, message.id, pdfBytes(3000))).status).toBe(201);
    const after = await fetched(t, path, m.token);
    expect(after.etag).toBe(`"${message.meta.version + 1}"`);
    expect(JSON.parse(after.text).data.attributes.fileAttachment.versions).toHaveLength(1);
    expect(after).toEqual(await fetched(keepingNothing, path, m.token));
  });
});
