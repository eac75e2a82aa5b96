/**
 * The idempotent create's race with a request that commits the same key after this one looked it up
 * (src/http/idempotency.ts: lock and lookup are one statement, and so is all of a single-row `createResource`).
 * PostgreSQL only: the racing request commits on a second connection while the first transaction is
 * open, which PGlite's one connection cannot do.
 */
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AppDatabase } from '../../src/db/database.js';
import { jsonb } from '../../src/db/json.js';
import type { ResourceObject } from '../../src/http/envelope.js';
import { createResource } from '../../src/http/idempotency.js';
import { siteCreation } from '../../src/modules/sites/service.js';
import { createTenant } from '../../src/modules/tenants/service.js';
import { Problem } from '../../src/http/problem.js';
import { systemClock } from '../../src/lib/clock.js';
import { databaseUrlOf, openTestDatabase } from '../helpers/app.js';

const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('an Idempotency-Key committed by a racing request after the lookup', () => {
  let database: AppDatabase;
  const payload = { name: 'Store' };
  const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');

  beforeAll(async () => {
    database = await openTestDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  /** The racing request's completed key, committed on another connection of the pool. */
  async function commitElsewhere(tenantId: string, key: string, requestHash: string): Promise<void> {
    const now = new Date();
    await database.db
      .insertInto('idempotency_keys')
      .values({
        tenant_id: tenantId,
        resource_type: 'race-test',
        key,
        request_hash: requestHash,
        resource_id: 'res_racer',
        response_status: 201,
        response_body: jsonb({ data: { id: 'res_racer' } }),
        response_etag: '"1"',
        completed_at: now,
        expires_at: new Date(now.getTime() + 60_000),
      })
      .execute();
  }

  function run(tenantId: string, create: (call: number) => Promise<ResourceObject<unknown>>) {
    let calls = 0;
    const outcome = createResource(
      database.db,
      systemClock,
      { auth: { tenantId }, headers: { 'idempotency-key': 'k-1' }, body: payload },
      { resourceType: 'race-test', exists: async () => true },
      async () => create(++calls),
    );
    return { outcome, calls: () => calls };
  }

  const mine = {
    id: 'res_mine',
    type: 'race-test',
    attributes: {},
    meta: { version: 1, etag: '"1"' },
  } as ResourceObject<unknown>;

  it('is found by the key insert: the transaction rolls back and the request replays the racer', async () => {
    const tenantId = `tnt_${randomUUID()}`;
    const attempt = run(tenantId, async (call) => {
      if (call === 1) await commitElsewhere(tenantId, 'k-1', hashOf(JSON.stringify(payload)));
      return mine;
    });
    await expect(attempt.outcome).resolves.toMatchObject({
      id: 'res_racer',
      replayed: true,
      body: { data: { id: 'res_racer' } },
    });
    expect(attempt.calls()).toBe(1);
  });

  it('is found after a create that failed on what the racer made: the request replays the racer', async () => {
    const tenantId = `tnt_${randomUUID()}`;
    const attempt = run(tenantId, async (call) => {
      if (call === 1) {
        await commitElsewhere(tenantId, 'k-1', hashOf(JSON.stringify(payload)));
        throw new Problem('duplicate-resource', 'taken by the racer');
      }
      return mine;
    });
    await expect(attempt.outcome).resolves.toMatchObject({ id: 'res_racer', replayed: true });
    expect(attempt.calls()).toBe(1);
  });

  it('with another body is a conflict, as when the key is seen at once', async () => {
    const tenantId = `tnt_${randomUUID()}`;
    const attempt = run(tenantId, async (call) => {
      if (call === 1) await commitElsewhere(tenantId, 'k-1', hashOf('{"name":"Other"}'));
      return mine;
    });
    await expect(attempt.outcome).rejects.toMatchObject({ slug: 'idempotency-conflict' });
  });

  it('without a race, a failed create keeps its own error and leaves the key free', async () => {
    const tenantId = `tnt_${randomUUID()}`;
    const failed = run(tenantId, async () => {
      throw new Problem('duplicate-resource', 'a real duplicate');
    });
    await expect(failed.outcome).rejects.toMatchObject({ detail: 'a real duplicate' });
    expect(failed.calls()).toBe(1);
    await expect(run(tenantId, async () => mine).outcome).resolves.toMatchObject({ id: 'res_mine', replayed: false });
  });
});

/**
 * A single-row `createResource`'s one statement racing a request that holds no lock any more: its site and key are written
 * but not yet committed when the statement takes its snapshot, and commit while the statement waits on
 * them (the unique index makes it wait). Both outcomes of that race go to the general path.
 */
describe.skipIf(!databaseUrl)(
  'a single-row create racing a request that commits the same key during its one statement',
  () => {
    let database: AppDatabase;
    let racer: pg.Client;

    beforeAll(async () => {
      database = await openTestDatabase();
      racer = new pg.Client({ connectionString: databaseUrlOf(database) });
      await racer.connect();
    });

    afterAll(async () => {
      await racer?.end();
      await database?.close();
    });

    /** The request hash of a flat body (canonical JSON: members sorted). */
    const hashOf = (payload: object) =>
      createHash('sha256')
        .update(JSON.stringify(Object.fromEntries(Object.entries(payload).sort())))
        .digest('hex');
    const siteInput = (siteCode: string) => ({
      name: 'Store',
      siteCode,
      addressLine1: '1 Main Street',
      city: 'Springfield',
      stateRegion: 'IL',
      postalCode: '62701',
      country: 'US',
    });

    /** Starts the racer's transaction: its site and its completed key, uncommitted. */
    async function racerWrites(tenantId: string, key: string, body: ReturnType<typeof siteInput>): Promise<string> {
      const { row } = siteCreation(tenantId, body, new Date()).insert;
      await racer.query('begin');
      await racer.query(
        `insert into sites (id, tenant_id, site_code, name, address_line1, city, state_region, postal_code, country, status, created_at, updated_at)
      values ($1, $2, $3, 'Store', '1 Main Street', 'Springfield', 'IL', '62701', 'US', 'Active', now(), now())`,
        [row.id, tenantId, body.siteCode],
      );
      await racer.query(
        `insert into idempotency_keys (tenant_id, resource_type, key, request_hash, resource_id, response_status, response_body, response_etag, completed_at, expires_at)
      values ($1, 'sites', $2, $3, $4, 201, $5, '"1"', now(), now() + interval '1 hour')`,
        [tenantId, key, hashOf(body), row.id, JSON.stringify({ data: { id: row.id } })],
      );
      return row.id as string;
    }

    /** Commits the racer once the create is waiting on its rows. */
    async function commitWhenBlocked(): Promise<void> {
      for (let waited = 0; waited < 5_000; waited += 20) {
        const { rows } = await racer.query(
          `select count(*)::int as waiting from pg_locks where not granted and pid <> pg_backend_pid()`,
        );
        if (rows[0].waiting > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await racer.query('commit');
    }

    function attempt(tenantId: string, key: string, body: ReturnType<typeof siteInput>) {
      const request = { auth: { tenantId }, headers: { 'idempotency-key': key }, body };
      return createResource(
        database.db,
        systemClock,
        request,
        { resourceType: 'sites', exists: async () => true },
        siteCreation(tenantId, body, new Date()),
      );
    }

    it('the same body: the insert finds the racer’s site, the key is committed, and the request replays it', async () => {
      const { tenantId } = await createTenant(database.db, { name: 'race' }, new Date());
      const body = siteInput(`RACE-${randomUUID()}`);
      const racerId = await racerWrites(tenantId, 'k-same', body);
      const outcome = attempt(tenantId, 'k-same', body);
      await commitWhenBlocked();
      await expect(outcome).resolves.toMatchObject({ id: racerId, replayed: true });
    });

    it('another body: the key’s primary key refuses the snapshot, nothing is created, and the answer is a conflict', async () => {
      const { tenantId } = await createTenant(database.db, { name: 'race' }, new Date());
      await racerWrites(tenantId, 'k-other', siteInput(`RACE-${randomUUID()}`));
      const mine = siteInput(`MINE-${randomUUID()}`);
      const outcome = attempt(tenantId, 'k-other', mine);
      await commitWhenBlocked();
      await expect(outcome).rejects.toMatchObject({ slug: 'idempotency-conflict' });
      const { rows } = await racer.query(
        'select count(*)::int as n from sites where tenant_id = $1 and site_code = $2',
        [tenantId, mine.siteCode],
      );
      expect(rows[0].n).toBe(0);
    });
  },
);
