/**
 * The publishing rule's SQL condition (outbox/service.ts `publishedToTenantCondition`, used by the statement
 * that queues an event's deliveries) agrees with `isPublishedTo`, both ways, for every event type and every
 * combination of the tenant's settings, as the database evaluates it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDatabase } from '../../src/db/database.js';
import { isPublishedTo, publishedToTenantCondition } from '../../src/modules/outbox/service.js';
import { EVENT_TYPES } from '../../src/modules/outbox/types.js';
import { openTestDatabase } from '../helpers/app.js';
import { TENANT_SETTINGS } from '../helpers/tenant-settings.js';

let database: AppDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the publishing rule's SQL condition", () => {
  it('publishes exactly what isPublishedTo publishes', async () => {
    const published: boolean[] = [];
    const expected: boolean[] = [];
    for (const type of EVENT_TYPES)
      for (const tenant of TENANT_SETTINGS) {
        const result = await sql<{ published: boolean }>`
          select ${publishedToTenantCondition(sql<string>`${type}::text`)} as published
          from (select ${tenant.webhookAccess}::boolean as webhook_access, ${tenant.apiEnabled}::boolean as api_enabled) t`.execute(
          database.db,
        );
        published.push(result.rows[0]!.published);
        expected.push(isPublishedTo(tenant, type));
      }
    expect(published).toEqual(expected);
    // Both ways: the rule publishes some and withholds some.
    expect(expected).toContain(true);
    expect(expected).toContain(false);
  });
});
