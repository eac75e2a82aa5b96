/**
 * PostgreSQL only (PGlite has one connection, so a request never waits for a row another one holds): a
 * change's times never go back. A request reads the clock before it waits for the row it changes; when
 * another writer changed the row meanwhile, the later version must not show an earlier updatedAt (nor its
 * event an earlier occurredAt, nor its file version an earlier uploadedAt), or a client following changes
 * by updatedAt would miss one. Here the other writer is a connection of the test that holds the row while
 * the request waits, then writes a later time and commits.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { databaseUrlOf, startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { createVisit, visitTenant, type VisitTenant, workflowAction } from '../helpers/visits.js';

const url = inject('databaseUrl');
const START = new Date('2026-11-27T10:00:00.000Z');
/** What the other writer stores, a minute after the clock the waiting request read. */
const LATER = new Date('2026-11-27T10:01:00.000Z');

describe.skipIf(!url)('times of a change made after waiting for another writer', () => {
  let t: TestApp;
  let v: VisitTenant;
  const clock = new ManualClock(START);
  beforeAll(async () => {
    t = await startTestApp({ clock });
    v = await visitTenant(t);
  });
  afterAll(async () => t?.close());

  /**
   * Sends the request while another connection holds `table`'s row `id`; once the request waits for it,
   * that connection adds 1 to the row's version, stores LATER as its updatedAt and commits.
   */
  async function afterAnotherWriter(table: string, id: string, send: () => Promise<TestResponse>) {
    clock.set(START);
    const other = new pg.Client({ connectionString: databaseUrlOf(t.database) });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(`select 1 from ${table} where id = $1 for update`, [id]);
      const response = send();
      // The request is waiting once a connection of this database waits for a lock.
      for (;;) {
        // The activity view is a snapshot held for the transaction unless cleared.
        await other.query('select pg_stat_clear_snapshot()');
        const waiting = await other.query(
          "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        );
        if (waiting.rowCount) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await other.query(`update ${table} set version = version + 1, updated_at = $2 where id = $1`, [id, LATER]);
      await other.query('commit');
      return await response;
    } finally {
      await other.end();
    }
  }

  it('a visit PATCH', async () => {
    const visit = await createVisit(t, v);
    const response = await afterAnotherWriter('site_visits', visit.id, () =>
      t.http.patch(`/api/v1/site-visits/${visit.id}`, { token: v.fullToken, json: { description: 'Changed' } }),
    );
    expect(response.status).toBe(200);
    expect(response.body.data.meta.version).toBe(3);
    expect(response.body.data.attributes.updatedAt).toBe(LATER.toISOString());
  });

  it('a workflow action, and its event', async () => {
    const visit = await createVisit(t, v);
    const response = await afterAnotherWriter('site_visits', visit.id, () =>
      workflowAction(t, visit.id, { action: 'schedule', scheduledDate: '2026-12-02' }),
    );
    expect(response.status).toBe(200);
    expect(response.body.data.attributes.updatedAt).toBe(LATER.toISOString());
    const events = await t.database.db
      .selectFrom('events')
      .select(['type', 'occurred_at'])
      .where('resource_id', '=', visit.id)
      .where('type', '=', 'job.scheduled')
      .execute();
    expect(events.map((event) => event.occurred_at.toISOString())).toEqual([LATER.toISOString()]);
  });

  it('a return-label upload, and its version', async () => {
    const visit = await createVisit(t, v);
    const response = await afterAnotherWriter('site_visits', visit.id, () =>
      t.http.post(`/api/v1/site-visits/${visit.id}/return-label`, {
        token: v.fullToken,
        body: fileForm(pdfBytes()),
        headers: { 'content-type': MULTIPART_CONTENT_TYPE },
      }),
    );
    expect(response.status).toBe(201);
    expect(response.body.data.returnLabel.versions[0].uploadedAt).toBe(LATER.toISOString());
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.fullToken });
    expect(read.body.data.attributes.updatedAt).toBe(LATER.toISOString());
  });

  it("a site's new code, on the site's visits", async () => {
    const visit = await createVisit(t, v);
    // The visit is the row held: the site's PATCH waits for it when it moves the visits' version.
    const response = await afterAnotherWriter('site_visits', visit.id, () =>
      t.http.patch(`/api/v1/sites/${v.siteId}`, { token: v.fullToken, json: { siteCode: `${v.siteCode}-2` } }),
    );
    expect(response.status).toBe(200);
    v.siteCode = `${v.siteCode}-2`;
    const read = await t.http.get(`/api/v1/site-visits/${visit.id}`, { token: v.fullToken });
    expect(read.body.data.meta.version).toBe(3);
    expect(read.body.data.attributes.updatedAt).toBe(LATER.toISOString());
  });

  it('a site PATCH', async () => {
    const response = await afterAnotherWriter('sites', v.siteId, () =>
      t.http.patch(`/api/v1/sites/${v.siteId}`, { token: v.fullToken, json: { name: 'Renamed store' } }),
    );
    expect(response.status).toBe(200);
    expect(response.body.data.attributes.updatedAt).toBe(LATER.toISOString());
  });

  it('a message PATCH and an attachment upload', async () => {
    const visit = await createVisit(t, v);
    const message = await t.http.post('/api/v1/messages', {
      token: v.fullToken,
      json: { siteVisitId: visit.id, messageThread: 'Hello' },
    });
    const id = message.body.data.id;
    const patched = await afterAnotherWriter('messages', id, () =>
      t.http.patch(`/api/v1/messages/${id}`, { token: v.fullToken, json: { messageThread: 'Changed' } }),
    );
    expect(patched.body.data.attributes.updatedAt).toBe(LATER.toISOString());
    const uploaded = await afterAnotherWriter('messages', id, () =>
      t.http.post(`/api/v1/messages/${id}/file-attachment`, {
        token: v.fullToken,
        body: fileForm(pdfBytes()),
        headers: { 'content-type': MULTIPART_CONTENT_TYPE },
      }),
    );
    expect(uploaded.body.data.fileAttachment.versions[0].uploadedAt).toBe(LATER.toISOString());
    const again = await t.http.get(`/api/v1/messages/${id}`, { token: v.fullToken });
    expect(again.body.data.attributes.updatedAt).toBe(LATER.toISOString());
  });
});
