import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../src/http/pagination.js';
import { seal } from '../../src/lib/secrets.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid } from '../helpers/problems.js';
import { siteBody, tenantWithToken } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

type Site = { id: string };

async function tenantWithSites(count: number, fields: (index: number) => Record<string, unknown> = () => ({})) {
  const tenant = await tenantWithToken(t);
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const response = await t.http.post('/api/v1/sites', { token: tenant.token, json: siteBody(fields(index)) });
    ids.push(response.body.data.id);
  }
  return { ...tenant, ids };
}

/** Follows nextCursor to the end; returns the pages' ids and metas. */
async function allPages(token: string, query: Record<string, string | number> = {}) {
  const pages: { ids: string[]; meta: Record<string, unknown> }[] = [];
  let after: string | undefined;
  do {
    const response = await t.http.get('/api/v1/sites', {
      token,
      query: { ...query, ...(after ? { 'page[after]': after } : {}) },
    });
    expect(response.status, response.text).toBe(200);
    pages.push({ ids: response.body.data.map((site: Site) => site.id), meta: response.body.meta });
    after = response.body.meta.nextCursor;
  } while (after !== undefined && pages.length < 200);
  return pages;
}

describe('cursor pagination', () => {
  it('walks every record once, oldest first, with nextCursor absent (not null) on the last page', async () => {
    const { token, ids } = await tenantWithSites(7);
    const pages = await allPages(token, { 'page[size]': 3 });
    expect(pages.map((page) => page.ids)).toEqual([ids.slice(0, 3), ids.slice(3, 6), ids.slice(6)]);
    expect(pages.map((page) => page.meta.pageSize)).toEqual([3, 3, 3]);
    expect(typeof pages[0]!.meta.nextCursor).toBe('string');
    expect(pages[2]!.meta).toEqual({ pageSize: 3 });
    expect('nextCursor' in pages[2]!.meta).toBe(false);
  });

  it('has no nextCursor when the last page is exactly full', async () => {
    const { token, ids } = await tenantWithSites(4);
    const pages = await allPages(token, { 'page[size]': 2 });
    expect(pages.map((page) => page.ids)).toEqual([ids.slice(0, 2), ids.slice(2)]);
    expect(pages[1]!.meta).toEqual({ pageSize: 2 });
  });

  it('page sizes 1 and 100, and the default of 25', async () => {
    const { token, ids } = await tenantWithSites(27);
    const ones = await allPages(token, { 'page[size]': 1 });
    expect(ones.flatMap((page) => page.ids)).toEqual(ids);
    expect(ones).toHaveLength(27);
    const defaults = await allPages(token);
    expect(defaults.map((page) => page.ids.length)).toEqual([25, 2]);
    expect(defaults.map((page) => page.meta.pageSize)).toEqual([25, 25]);
    const hundred = await allPages(token, { 'page[size]': 100 });
    expect(hundred).toEqual([{ ids, meta: { pageSize: 100 } }]);
  });

  it('stays stable while records are inserted between pages', async () => {
    const { token, ids } = await tenantWithSites(5);
    const first = await t.http.get('/api/v1/sites', { token, query: { 'page[size]': 2 } });
    expect(first.body.data.map((site: Site) => site.id)).toEqual(ids.slice(0, 2));
    const added: string[] = [];
    for (let index = 0; index < 3; index++)
      added.push((await t.http.post('/api/v1/sites', { token, json: siteBody() })).body.data.id);
    const rest = await allPages(token, { 'page[size]': 2, 'page[after]': first.body.meta.nextCursor });
    expect(rest.flatMap((page) => page.ids)).toEqual([...ids.slice(2), ...added]);
  });

  it('a cursor can be reused and gives the same page', async () => {
    const { token } = await tenantWithSites(4);
    const first = await t.http.get('/api/v1/sites', { token, query: { 'page[size]': 2 } });
    const query = { 'page[size]': 2, 'page[after]': first.body.meta.nextCursor };
    const a = await t.http.get('/api/v1/sites', { token, query });
    const b = await t.http.get('/api/v1/sites', { token, query });
    expect(a.body).toEqual(b.body);
  });

  it('a filtered list paginates too', async () => {
    const { token, ids } = await tenantWithSites(5, (index) => ({ uniqueID2: index % 2 === 0 ? 'EVEN' : 'ODD' }));
    const pages = await allPages(token, { uniqueID2: 'EVEN', 'page[size]': 2 });
    expect(pages.map((page) => page.ids)).toEqual([[ids[0], ids[2]], [ids[4]]]);
  });

  it("refuses another filter's cursor, or the unfiltered list's: it would skip this list's rows before it", async () => {
    const { token } = await tenantWithSites(5, (index) => ({ uniqueID2: index % 2 === 0 ? 'EVEN' : 'ODD' }));
    const list = (query: Record<string, string | number>) => t.http.get('/api/v1/sites', { token, query });
    const unfiltered = (await list({ 'page[size]': 3 })).body.meta.nextCursor as string;
    const even = (await list({ uniqueID2: 'EVEN', 'page[size]': 1 })).body.meta.nextCursor as string;
    const errors = expectInvalid(await list({ uniqueID2: 'EVEN', 'page[after]': unfiltered }), ['page[after]']);
    expect(errors['page[after]']![0]).toContain('with the filters that page was asked with');
    expectInvalid(await list({ uniqueID2: 'ODD', 'page[after]': even }), ['page[after]']);
    expectInvalid(await list({ 'page[after]': even }), ['page[after]']);
    expect((await list({ uniqueID2: 'EVEN', 'page[after]': even })).status).toBe(200);
  });
});

describe('list query errors (422)', () => {
  let token: string;
  let tenantId: string;
  beforeAll(async () => {
    ({ token, tenantId } = await tenantWithSites(3));
  });
  const list = (query: Record<string, string | number>) => t.http.get('/api/v1/sites', { token, query });

  it.each(['0', '101', '-1', 'abc', '1.5', '', '25abc', 'true'])('page[size]=%j', async (size) => {
    const errors = expectInvalid(await list({ 'page[size]': size }), ['page[size]']);
    expect(errors['page[size]']!.length).toBeGreaterThan(0);
  });

  it('page[size] given twice', async () => {
    expectInvalid(await t.http.get('/api/v1/sites?page[size]=2&page[size]=3', { token }), ['page[size]']);
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    ['three garbage parts', 'a.b.c'],
    ['a number', '12'],
    ['too long', 'x'.repeat(600)],
    ['empty', ''],
  ])('page[after] %s', async (_label, after) => {
    expectInvalid(await list({ 'page[after]': after }), ['page[after]']);
  });

  it('page[after] tampered with', async () => {
    const first = await list({ 'page[size]': 1 });
    const cursor: string = first.body.meta.nextCursor;
    const [iv, body, tag] = cursor.split('.') as [string, string, string];
    const flip = (part: string) => part.slice(0, 2) + (part[2] === 'A' ? 'B' : 'A') + part.slice(3);
    for (const tampered of [
      `${flip(iv)}.${body}.${tag}`,
      `${iv}.${flip(`${body}AAAA`)}.${tag}`,
      `${iv}.${body}.${flip(tag)}`,
      `${iv}.${body}`,
      cursor.slice(0, -2),
    ]) {
      expectInvalid(await list({ 'page[after]': tampered }), ['page[after]']);
    }
  });

  it('page[after] of another tenant', async () => {
    const other = await tenantWithSites(3);
    const foreign = await t.http.get('/api/v1/sites', { token: other.token, query: { 'page[size]': 1 } });
    expectInvalid(await list({ 'page[after]': foreign.body.meta.nextCursor }), ['page[after]']);
  });

  it('page[after] of another list, or forged with a wrong position', async () => {
    const codec = new CursorCodec(t.keys.cursorKey);
    expectInvalid(await list({ 'page[after]': codec.encode('site-visits', tenantId, 1) }), ['page[after]']);
    expectInvalid(await list({ 'page[after]': codec.encode('messages', tenantId, 1) }), ['page[after]']);
    expectInvalid(await list({ 'page[after]': codec.encode('sites', tenantId, -1) }), ['page[after]']);
    expectInvalid(await list({ 'page[after]': seal(t.keys.cursorKey, 'one', `sites|${tenantId}`) }), ['page[after]']);
    // The genuine article is accepted.
    expect((await list({ 'page[after]': codec.encode('sites', tenantId, 0) })).status).toBe(200);
  });

  it('page[after] sealed with another key (another deployment)', async () => {
    const codec = new CursorCodec(Buffer.alloc(32, 7));
    expectInvalid(await list({ 'page[after]': codec.encode('sites', tenantId, 1) }), ['page[after]']);
  });

  it.each(['page[number]', 'page', 'filter[siteCode]', 'sort', 'status', 'id', 'sitecode', 'limit'])(
    'unknown query parameter %s',
    async (name) => {
      const errors = expectInvalid(await list({ [name]: '1' }), [name]);
      expect(errors[name]).toEqual(['is not a known field']);
    },
  );

  it('two or three filters at once name each of them', async () => {
    expectInvalid(await list({ siteCode: 'a', uniqueID: 'b' }), ['siteCode', 'uniqueID']);
    expectInvalid(await list({ uniqueID: 'b', uniqueID2: 'c' }), ['uniqueID', 'uniqueID2']);
    expectInvalid(await list({ siteCode: 'a', uniqueID: 'b', uniqueID2: 'c' }), ['siteCode', 'uniqueID', 'uniqueID2']);
  });

  it('a filter given twice, empty, or too long', async () => {
    expectInvalid(await t.http.get('/api/v1/sites?siteCode=a&siteCode=b', { token }), ['siteCode']);
    expectInvalid(await list({ siteCode: '' }), ['siteCode']);
    expectInvalid(await list({ uniqueID: 'x'.repeat(101) }), ['uniqueID']);
  });

  it('several errors are reported together', async () => {
    expectInvalid(await list({ 'page[size]': 0, 'page[after]': 'bad', bogus: 1 }), ['page[size]', 'bogus']);
  });
});
