/**
 * `GET /api/v1/messages?siteVisitId=`: one visit's messages, oldest first, paged with the list's cursors. A
 * cursor pages only the list it came from (the unfiltered list's is refused by a visit's, one visit's by
 * another's); a visit that is not the tenant's (another tenant's, or none) lists nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createMessage, messageTenant, type MessageTenant } from '../helpers/messages.js';
import { expectInvalid } from '../helpers/problems.js';
import { createVisit } from '../helpers/visits.js';

let t: TestApp;
let m: MessageTenant;
/** The tenant's second visit: its messages interleave with the first's. */
let otherVisitId: string;
/** The messages of `m.visitId`, then of `otherVisitId`, each in creation order. */
const ofVisit: string[] = [];
const ofOther: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  m = await messageTenant(t);
  otherVisitId = (await createVisit(t, m)).id;
  for (let index = 0; index < 7; index++) {
    ofVisit.push((await createMessage(t, m, { messageThread: `first visit ${index}` })).id);
    if (index % 2 === 0) ofOther.push((await createMessage(t, { ...m, visitId: otherVisitId })).id);
  }
});
afterAll(async () => t?.close());

function list(query: Record<string, string | number | undefined>, token = m.token) {
  return t.http.get('/api/v1/messages', { token, query });
}

/** Every id of the visit's list, following nextCursor with pages of `size`. */
async function allPages(siteVisitId: string, size: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const response = await list({ siteVisitId, 'page[size]': size, 'page[after]': after });
    expect(response.status, response.text).toBe(200);
    expect(response.body.meta.pageSize).toBe(size);
    for (const message of response.body.data) {
      expect(message.attributes.siteVisitId).toBe(siteVisitId);
      ids.push(message.id);
    }
    after = response.body.meta.nextCursor;
    pages += 1;
  } while (after !== undefined);
  return { ids, pages };
}

describe('GET /api/v1/messages?siteVisitId=', () => {
  it("lists only that visit's messages, oldest first, in the default page", async () => {
    const response = await list({ siteVisitId: m.visitId });
    expect(response.body.data.map((message: { id: string }) => message.id)).toEqual(ofVisit);
    expect(response.body.meta).toEqual({ pageSize: 25 });
    expect((await list({ siteVisitId: otherVisitId })).body.data.map((message: { id: string }) => message.id)).toEqual(
      ofOther,
    );
  });

  it('pages with page[size] and page[after] until nextCursor is absent, each message once', async () => {
    expect(await allPages(m.visitId, 3)).toEqual({ ids: ofVisit, pages: 3 });
    expect(await allPages(otherVisitId, 2)).toEqual({ ids: ofOther, pages: 2 });
  });

  it("refuses a cursor of the unfiltered list, of another visit's list, and a visit's cursor on the unfiltered list", async () => {
    const unfiltered = (await list({ 'page[size]': 1 })).body.meta.nextCursor;
    const visitCursor = (await list({ siteVisitId: m.visitId, 'page[size]': 1 })).body.meta.nextCursor;
    expect(unfiltered).toEqual(expect.any(String));
    expect(visitCursor).toEqual(expect.any(String));
    expectInvalid(await list({ siteVisitId: m.visitId, 'page[after]': unfiltered }), ['page[after]']);
    expectInvalid(await list({ siteVisitId: otherVisitId, 'page[after]': visitCursor }), ['page[after]']);
    const refused = expectInvalid(await list({ 'page[after]': visitCursor }), ['page[after]']);
    // It was passed unchanged: the message says what differs, the filters.
    expect(refused['page[after]']).toEqual([
      expect.stringMatching(/unchanged, with the filters that page was asked with$/),
    ]);
    // Its own list takes it.
    expect((await list({ siteVisitId: m.visitId, 'page[after]': visitCursor })).status).toBe(200);
  });

  it('lists nothing for a visit that does not exist', async () => {
    expect((await list({ siteVisitId: 'visit_doesnotexist' })).body).toEqual({ data: [], meta: { pageSize: 25 } });
    expect((await list({ siteVisitId: 'INC-1001' })).body).toEqual({ data: [], meta: { pageSize: 25 } });
  });

  it("lists nothing for another tenant's visit, exactly as for one that does not exist", async () => {
    const intruder = await messageTenant(t);
    await createMessage(t, intruder);
    const foreign = await list({ siteVisitId: m.visitId }, intruder.token);
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ data: [], meta: { pageSize: 25 } });
    // And the owner's cursor of that visit is not the intruder's to use.
    const cursor = (await list({ siteVisitId: m.visitId, 'page[size]': 1 })).body.meta.nextCursor;
    expectInvalid(await list({ siteVisitId: m.visitId, 'page[after]': cursor }, intruder.token), ['page[after]']);
    // The intruder's own visit lists its own message only.
    const own = await list({ siteVisitId: intruder.visitId }, intruder.token);
    expect(own.body.data).toHaveLength(1);
  });
});
