/**
 * The idempotent create's race with a request that commits the same key after this one looked it up
 * (src/http/idempotency.ts: lock and lookup are one statement). PostgreSQL only: the racing request
 * commits on a second connection while the first transaction is open, which PGlite's one connection
 * cannot do.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AppDatabase } from '../../src/db/database.js';
import { jsonb } from '../../src/db/json.js';
import { createIdempotently, type CreatedResource } from '../../src/http/idempotency.js';
import { Problem } from '../../src/http/problem.js';
import { systemClock } from '../../src/lib/clock.js';
import { openTestDatabase } from '../helpers/app.js';

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

  function run(tenantId: string, create: (call: number) => Promise<CreatedResource>) {
    let calls = 0;
    const outcome = createIdempotently(
      database.db,
      systemClock,
      { tenantId, resourceType: 'race-test', key: 'k-1', payload, stillAccessible: async () => true },
      async () => create(++calls),
    );
    return { outcome, calls: () => calls };
  }

  const mine: CreatedResource = { id: 'res_mine', status: 201, body: { data: { id: 'res_mine' } }, etag: '"1"' };

  it('is found by the key insert: the transaction rolls back and the request replays the racer', async () => {
    const tenantId = `tnt_${randomUUID()}`;
    const attempt = run(tenantId, async (call) => {
      if (call === 1) await commitElsewhere(tenantId, 'k-1', hashOf(JSON.stringify(payload)));
      return mine;
    });
    await expect(attempt.outcome).resolves.toMatchObject({ id: 'res_racer', replayed: true, body: { data: { id: 'res_racer' } } });
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
