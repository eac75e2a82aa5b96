/**
 * Lists whose rows carry many children (a visit's return-label versions, a message's attachment versions, up to
 * 100 each) read the children of the rows that fit the page only (src/http/page-body.ts), and answer what the
 * page rendered whole answered: the rows while their JSON fits PAGE_BYTES, each as its GET by id shows it, and
 * the cursor after the last. Found by a hostile-tenant probe: a page of 100 visits with 99 versions each read
 * 9,900 version rows to send some of them (which rows a page reads: tests/unit/http/page-body.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_BYTES } from '../../src/http/pagination.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, uploadAttachment } from '../helpers/messages.js';
import { fileForm, MULTIPART_CONTENT_TYPE, repeatFileVersions } from '../helpers/multipart.js';
import { createVisit } from '../helpers/visits.js';

let t: TestApp;
beforeAll(async () => {
  // No rendered rows kept: every page renders its rows, as a first reading does.
  t = await startTestApp({ config: { listCacheBytes: 0 } });
});
afterAll(async () => t?.close());

/** Text that JSON writes as six bytes a character (\u0001). */
const escaped = (length: number) => '\u0001'.repeat(length);
const PDF = Buffer.from('%PDF-1.4 label');

/** Every page of the list asked 100 at a time, as the rows' JSON texts (parsed) with the pages' cursors. */
async function pages(path: string, token: string) {
  const read: { rows: { id: string }[]; nextCursor?: string }[] = [];
  let after: string | undefined;
  do {
    const query = `page[size]=100${after ? `&page[after]=${encodeURIComponent(after)}` : ''}`;
    const response = await t.http.get(`${path}?${query}`, { token });
    expect(response.status).toBe(200);
    after = response.body.meta.nextCursor;
    read.push({ rows: response.body.data, nextCursor: after });
  } while (after);
  return read;
}

/** The JSON bytes of a row as the service writes it (these rows are ASCII and escapes, as JSON.stringify writes them). */
const bytesOf = (row: unknown) => Buffer.byteLength(JSON.stringify(row));

/**
 * The pages are those of the rule: each holds the rows while their JSON fits PAGE_BYTES, so the next page's
 * first row would not have fitted; every row is its GET by id's, every row is in one page, in order.
 */
async function expectPagesOfTheRule(
  read: Awaited<ReturnType<typeof pages>>,
  ids: string[],
  get: (id: string) => string,
  token: string,
) {
  expect(read.flatMap((page) => page.rows.map((row) => row.id)).filter((id) => ids.includes(id))).toEqual(ids);
  for (const [at, page] of read.entries()) {
    const bytes = page.rows.reduce((sum, row) => sum + bytesOf(row) + 1, 0);
    expect(bytes - 1).toBeLessThanOrEqual(PAGE_BYTES);
    const next = read[at + 1]?.rows[0];
    if (next !== undefined && page.rows.length < 100) expect(bytes + bytesOf(next)).toBeGreaterThan(PAGE_BYTES);
  }
  for (const row of read[0]!.rows.slice(0, 3)) {
    expect(row).toEqual((await t.http.get(get(row.id), { token })).body.data);
  }
}

describe('a list page of rows with 99 file versions each', () => {
  it('site visits: the pages of the rule, with the versions of the rows that fit read only', async () => {
    const m = await messageTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const visit = await createVisit(t, m, { jobInstructions: escaped(2_500 + i * 20) });
      const uploaded = await t.http.post(`/api/v1/site-visits/${visit.id}/return-label`, {
        token: m.fullToken,
        body: fileForm(PDF),
        headers: { 'content-type': MULTIPART_CONTENT_TYPE },
      });
      expect(uploaded.status).toBe(201);
      ids.push(visit.id);
    }
    await repeatFileVersions(t, m.tenantId, 99, 'site-visit-return-label');

    const read = await pages('/api/v1/site-visits', m.fullToken);
    // Cut past the first chunk of rows (the default page's 25): the second chunk holds the cut.
    expect(read[0]!.rows.length).toBeGreaterThan(25);
    expect(read.length).toBeGreaterThan(1);
    expect(read[0]!.rows[1]).toMatchObject({ attributes: { returnLabel: { versions: { length: 99 } } } });
    await expectPagesOfTheRule(read, ids, (id) => `/api/v1/site-visits/${id}`, m.fullToken);
  });

  it('messages: the pages of the rule, with the attachments of the rows that fit read only', async () => {
    const m = await messageTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const message = await createMessage(t, m, { messageThread: escaped(2_500 + i * 20) });
      expect((await uploadAttachment(t, m.fullToken, message.id, PDF)).status).toBe(201);
      ids.push(message.id);
    }
    await repeatFileVersions(t, m.tenantId, 99, 'message-file-attachment');

    const read = await pages('/api/v1/messages', m.fullToken);
    expect(read[0]!.rows.length).toBeGreaterThan(25);
    expect(read.length).toBeGreaterThan(1);
    expect(read[0]!.rows[0]).toMatchObject({ attributes: { fileAttachment: { versions: { length: 99 } } } });
    await expectPagesOfTheRule(read, ids, (id) => `/api/v1/messages/${id}`, m.fullToken);
  });
});
