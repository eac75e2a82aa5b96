/**
 * A list page carries at most PAGE_BYTES of its rows' JSON (the first row whatever its size), and goes on
 * with meta.nextCursor. Found by a hostile-tenant probe: visits with their longest texts written as control
 * characters (six bytes of JSON each) and 100 return-label versions made a page of 100 visits 14.5 MB; each
 * answer is held whole in memory until its client reads it, and 40 such pages left unread grew the process by
 * 640 MB (the rate limit lets one address ask some 200 within RESPONSE_TIMEOUT_MS).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_BYTES } from '../../src/http/pagination.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, type MessageTenant, messageTenant } from '../helpers/messages.js';
import { createVisit } from '../helpers/visits.js';

let t: TestApp;
let m: MessageTenant;
beforeAll(async () => {
  t = await startTestApp();
  m = await messageTenant(t);
});
afterAll(async () => t?.close());

/** Text of `length` characters that JSON writes as six bytes each (\u0001). */
const escaped = (length: number) => '\u0001'.repeat(length);
/** What a page's envelope adds to its rows: the brackets, commas and meta with a cursor. */
const ENVELOPE = 2048;

/** Every page of the list, asked 100 at a time: the ids in order, and the answers' sizes in bytes. */
async function readAll(path: string) {
  const ids: string[] = [];
  const pages: { bytes: number; rows: number; nextCursor?: string }[] = [];
  let after: string | undefined;
  do {
    const query = `page[size]=100${after ? `&page[after]=${encodeURIComponent(after)}` : ''}`;
    const response = await t.http.get(`${path}?${query}`, { token: m.fullToken });
    expect(response.status).toBe(200);
    expect(response.body.meta.pageSize).toBe(100);
    ids.push(...response.body.data.map((row: { id: string }) => row.id));
    after = response.body.meta.nextCursor;
    pages.push({ bytes: Buffer.byteLength(response.text), rows: response.body.data.length, nextCursor: after });
  } while (after);
  return { ids, pages };
}

describe('a list page of large rows', () => {
  it('stops at PAGE_BYTES with a cursor, and the pages hold every message once, in order', async () => {
    const created: string[] = [];
    for (let i = 0; i < 12; i++) {
      created.push((await createMessage(t, m, { messageThread: escaped(20_000) })).id);
    }
    const { ids, pages } = await readAll('/api/v1/messages');
    expect(ids.filter((id) => created.includes(id))).toEqual(created);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages[0]!.rows).toBeLessThan(12);
    for (const page of pages) expect(page.bytes).toBeLessThanOrEqual(PAGE_BYTES + ENVELOPE);

    // The same page asked again is the same answer (the page kept whole is the page cut).
    const again = await t.http.get('/api/v1/messages?page[size]=100', { token: m.fullToken });
    expect(again.body.data).toHaveLength(pages[0]!.rows);
    expect(again.body.meta.nextCursor).toBe(pages[0]!.nextCursor);
  });

  it('stops at PAGE_BYTES for visits too (rendered at each request)', async () => {
    const created: string[] = [];
    for (let i = 0; i < 18; i++) {
      const visit = await createVisit(t, m, { description: escaped(2_000), jobInstructions: escaped(10_000) });
      created.push(visit.id);
    }
    const { ids, pages } = await readAll('/api/v1/site-visits');
    expect(ids.filter((id) => created.includes(id))).toEqual(created);
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(page.bytes).toBeLessThanOrEqual(PAGE_BYTES + ENVELOPE);
  });

  it('leaves a page of small rows whole', async () => {
    const page = await t.http.get('/api/v1/sites?page[size]=100', { token: m.fullToken });
    expect(page.status).toBe(200);
    expect(page.body.data.length).toBeGreaterThan(0);
    expect(page.body.meta.nextCursor).toBeUndefined();
  });
});
