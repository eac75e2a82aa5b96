import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceObject } from '../../src/http/envelope.js';
import { createResource, REPLAY_WINDOW_MS } from '../../src/http/idempotency.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { Maintenance } from '../../src/runtime/maintenance.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestResponse } from '../helpers/http.js';
import { expectInvalid, expectProblem } from '../helpers/problems.js';
import { siteBody, tenantWithToken, tokenFor } from '../helpers/tenants.js';

const clock = new ManualClock();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => t?.close());

const create = (token: string, json: unknown, key?: string) =>
  t.http.post('/api/v1/sites', { token, json, ...(key !== undefined ? { headers: { 'idempotency-key': key } } : {}) });

async function sitesWithCode(token: string, siteCode: string): Promise<string[]> {
  const response = await t.http.get('/api/v1/sites', { token, query: { siteCode } });
  return response.body.data.map((site: { id: string }) => site.id);
}

function expectReplayOf(replay: TestResponse, original: TestResponse): void {
  expect(replay.status).toBe(201);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.headers.get('etag')).toBe(original.headers.get('etag'));
  expect(replay.body).toEqual(original.body);
}

describe('Idempotency-Key on POST /api/v1/sites', () => {
  it('a replay returns the original status, body and ETag, marked, and creates nothing', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody();
    const first = await create(token, body, 'import-row-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const replay = await create(token, body, 'import-row-1');
    expectReplayOf(replay, first);
    expect(await sitesWithCode(token, body.siteCode)).toEqual([first.body.data.id]);
  });

  it('the replay is a snapshot: later changes of the site do not show', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody();
    const first = await create(token, body, 'snapshot');
    await t.http.patch(`/api/v1/sites/${first.body.data.id}`, { token, json: { name: 'Changed since' } });
    const replay = await create(token, body, 'snapshot');
    expectReplayOf(replay, first);
    expect(replay.body.data.attributes.name).toBe(body.name);
    expect(replay.headers.get('etag')).toBe('"1"');
  });

  it('the same body with members in another order is the same request', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody({ keyRequired: true });
    const first = await create(token, body, 'order');
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expectReplayOf(await create(token, reordered, 'order'), first);
  });

  it('the same key with a different body is 409 idempotency-conflict and creates nothing', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody();
    await create(token, body, 'conflict');
    const other = siteBody();
    expectProblem(await create(token, other, 'conflict'), 409, 'idempotency-conflict');
    expectProblem(await create(token, { ...body, keyRequired: null }, 'conflict'), 409, 'idempotency-conflict');
    expect(await sitesWithCode(token, other.siteCode)).toEqual([]);
  });

  it('keys are case-sensitive and distinct keys create distinct sites', async () => {
    const { token } = await tenantWithToken(t);
    expect((await create(token, siteBody(), 'Key-A')).status).toBe(201);
    const second = await create(token, siteBody(), 'key-a');
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keys are independent per tenant', async () => {
    const a = await tenantWithToken(t);
    const b = await tenantWithToken(t);
    const body = siteBody();
    const fromA = await create(a.token, body, 'shared-key');
    const fromB = await create(b.token, body, 'shared-key');
    expect(fromB.status).toBe(201);
    expect(fromB.headers.get('idempotent-replayed')).toBeNull();
    expect(fromB.body.data.id).not.toBe(fromA.body.data.id);
    expect(fromB.body.data.attributes.clientId).toBe(b.tenantId);
    // And a different body under B's key is B's own conflict, not A's.
    expectProblem(await create(b.token, siteBody(), 'shared-key'), 409, 'idempotency-conflict');
  });

  it('keys are independent per resource type', async () => {
    const { token, tenantId } = await tenantWithToken(t);
    const body = siteBody();
    const site = await create(token, body, 'shared-across-types');
    const outcome = await createResource(
      t.database.db,
      clock,
      { auth: { tenantId }, headers: { 'idempotency-key': 'shared-across-types' }, body: { other: 'payload' } },
      { resourceType: 'site-visits', exists: async () => true },
      async () =>
        ({
          id: 'visit_test',
          type: 'site-visits',
          attributes: {},
          meta: { version: 1, etag: '"1"' },
        }) as ResourceObject<unknown>,
    );
    expect(outcome).toMatchObject({ replayed: false, id: 'visit_test' });
    expectReplayOf(await create(token, body, 'shared-across-types'), site);
  });

  it('a failed create does not use up the key: 422 and 409 duplicate, then success with the same key', async () => {
    const { token } = await tenantWithToken(t);
    const taken = siteBody();
    await create(token, taken);
    expectInvalid(await create(token, { ...siteBody(), name: '' }, 'retry-me'), ['name']);
    expectProblem(await create(token, siteBody({ siteCode: taken.siteCode }), 'retry-me'), 409, 'duplicate-resource');
    const fixed = siteBody();
    const success = await create(token, fixed, 'retry-me');
    expect(success.status).toBe(201);
    expect(success.headers.get('idempotent-replayed')).toBeNull();
    expectReplayOf(await create(token, fixed, 'retry-me'), success);
  });

  it('concurrent requests with one key never create two sites', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody();
    const responses = await Promise.all(Array.from({ length: 20 }, () => create(token, body, 'burst')));
    const created = responses.filter((response) => response.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const response of responses) {
      if (response.status === 201) continue;
      expectProblem(response, 409, 'idempotency-pending');
      expect(response.headers.get('retry-after')).toBe('1');
    }
    expect(created.filter((response) => response.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(new Set(created.map((response) => response.body.data.id)).size).toBe(1);
    expect(await sitesWithCode(token, body.siteCode)).toEqual([created[0]!.body.data.id]);
  });

  it('concurrent requests with one key and different bodies: one site, replays of it, conflicts, never a duplicate', async () => {
    // Body c has a's siteCode: when c loses the race to a after its one-statement lookup, its insert
    // finds a's site, and the answer must still be the key's conflict, not a duplicate siteCode.
    const { token } = await tenantWithToken(t);
    for (let round = 0; round < 8; round++) {
      const a = siteBody();
      const bodies = [a, siteBody(), { ...a, name: 'Another name' }];
      const sent = Array.from({ length: 15 }, (_, index) => bodies[index % 3]!);
      const responses = await Promise.all(sent.map((body) => create(token, body, `mixed-${round}`)));
      const originals = responses.filter(
        (response) => response.status === 201 && response.headers.get('idempotent-replayed') === null,
      );
      expect(originals).toHaveLength(1);
      const winner = sent[responses.indexOf(originals[0]!)]!;
      responses.forEach((response, index) => {
        if (sent[index] === winner && response.status === 201) expect(response.body).toEqual(originals[0]!.body);
        else if (sent[index] === winner) expectProblem(response, 409, 'idempotency-pending');
        else expect(response.body.type).toMatch(/\/(idempotency-conflict|idempotency-pending)$/);
      });
      const codes = await Promise.all(
        [...new Set(bodies.map((body) => body.siteCode))].map((code) => sitesWithCode(token, code)),
      );
      expect(codes.flat()).toEqual([originals[0]!.body.data.id]);
    }
  });

  it('replays for 24 hours after completion, then the key is free again', async () => {
    const tenant = await tenantWithToken(t);
    const body = siteBody();
    const first = await create(tenant.token, body, 'daily');
    clock.advance(REPLAY_WINDOW_MS - 1_000);
    // The first token has long expired; the key has not.
    const token = await tokenFor(t, tenant);
    expectReplayOf(await create(token, body, 'daily'), first);
    expectProblem(await create(token, siteBody(), 'daily'), 409, 'idempotency-conflict');
    clock.advance(1_000);
    const later = await tokenFor(t, tenant);
    // Expired: the key no longer replays; the same body is an ordinary (duplicate) create...
    expectProblem(await create(later, body, 'daily'), 409, 'duplicate-resource');
    // ...and a new body under the old key is a fresh create.
    const fresh = await create(later, siteBody(), 'daily');
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.data.id).not.toBe(first.body.data.id);
  });

  it('a replay whose site is no longer accessible is 404, not a stale snapshot', async () => {
    const { token, tenantId } = await tenantWithToken(t);
    const body = siteBody();
    const first = await create(token, body, 'gone');
    // The operator removes the site (there is no client delete route).
    await t.database.db
      .deleteFrom('sites')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', first.body.data.id)
      .execute();
    expectProblem(await create(token, body, 'gone'), 404, 'not-found');
  });

  it('the maintenance loop purges keys past their replay window, and only those', async () => {
    // In the past, so that the purge at the real time removes only keys that have expired for everyone
    // (the PostgreSQL test database is shared with files running at the same time).
    const now = new Date();
    clock.set(new Date(now.getTime() - REPLAY_WINDOW_MS - 60_000));
    const tenant = await tenantWithToken(t);
    expect((await create(tenant.token, siteBody(), 'old')).status).toBe(201);
    clock.set(new Date(now.getTime() - REPLAY_WINDOW_MS / 2));
    expect((await create(await tokenFor(t, tenant), siteBody(), 'recent')).status).toBe(201);
    clock.set(now);
    await new Maintenance(t.database.db, clock, createLogger({ logLevel: 'silent' })).runOnce();
    const keys = await t.database.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('tenant_id', '=', tenant.tenantId)
      .execute();
    expect(keys.map((row) => row.key)).toEqual(['recent']);
  });

  it('without a key every create is a new one', async () => {
    const { token } = await tenantWithToken(t);
    const body = siteBody();
    expect((await create(token, body)).status).toBe(201);
    expectProblem(await create(token, body), 409, 'duplicate-resource');
  });
});

describe('invalid keys (422 naming Idempotency-Key)', () => {
  let token: string;
  beforeAll(async () => {
    ({ token } = await tenantWithToken(t));
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['with a space', 'row 1'],
    ['with a tab', 'row\t1'],
  ])('%s', async (_label, key) => {
    expectInvalid(await create(token, siteBody(), key), ['Idempotency-Key']);
  });

  it('non-ASCII', async () => {
    // fetch refuses non-Latin-1 header values; send the UTF-8 bytes as Latin-1 characters, as a raw client would.
    expectInvalid(await create(token, siteBody(), Buffer.from('clé-1').toString('latin1')), ['Idempotency-Key']);
  });

  it('255 visible ASCII characters are accepted', async () => {
    const key = Array.from({ length: 255 }, (_, index) => String.fromCharCode(0x21 + (index % 94))).join('');
    expect((await create(token, siteBody(), key)).status).toBe(201);
  });

  it('an invalid key creates nothing', async () => {
    const body = siteBody();
    await create(token, body, 'k'.repeat(300));
    expect(await sitesWithCode(token, body.siteCode)).toEqual([]);
  });
});
