/**
 * The one-statement idempotent create (db/idempotency-keys.ts) and the single-row insert without a key
 * (db/single-row-insert.ts) are compiled by Kysely once per shape and their text reused with parameters
 * listed by hand, in placeholder order; a shape whose list disagrees with Kysely's would silently be compiled
 * on every create. Every shape the service creates agrees.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { compileCreateWithKey, type KeyRef, type KeySnapshot } from '../../../src/db/idempotency-keys.js';
import type { Database } from '../../../src/db/schema.js';
import { compileSingleRowInsert } from '../../../src/db/single-row-insert.js';
import { newId } from '../../../src/lib/ids.js';
import { eventCompanions } from '../../../src/modules/outbox/repository/events.js';
import { visitReferencesGuard } from '../../../src/modules/site-visits/references-repository.js';
import { visitInsert } from '../../../src/modules/site-visits/repository.js';
import { siteCreation } from '../../../src/modules/sites/service.js';
import { siteBody } from '../../helpers/tenants.js';

const db = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (kysely) => new PostgresIntrospector(kysely),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const now = new Date('2026-11-26T10:00:00.000Z');
const ref: KeyRef = { tenantId: 'ten_1', resourceType: 'things', key: 'key-1', lockId: '42' };
const snapshot: KeySnapshot = {
  requestHash: 'hash',
  resourceId: 'id_1',
  status: 201,
  body: { data: { id: 'id_1' } },
  etag: '"1"',
  completedAt: now,
  expiresAt: new Date(now.getTime() + 86_400_000),
};

/** A site's insert, as the service describes it. */
const siteInsert = (siteCode: string) => siteCreation('ten_1', siteBody({ siteCode }), now).insert;

describe('the one-statement create, compiled once per shape', () => {
  it("reuses a site's", () => {
    expect(compileCreateWithKey(db, ref, siteInsert('S-1'), snapshot).reusable).toBe(true);
  });

  it("reuses a visit's with its event and deliveries as companions, and its references' guard", () => {
    const event = {
      id: newId('evt'),
      type: 'ticket.created',
      occurredAt: now,
      resourceType: 'site-visits',
      resourceId: 'visit_1',
      payloadVersion: '2026-11-01',
      data: { clientTicketNumber: null, clientSiteId: 'S-1', status: 'New' },
    };
    const row = {
      id: 'visit_1',
      tenant_id: 'ten_1',
      site_id: 'site_1',
      client_ticket_number: null,
      description: 'Replace the card reader',
      status: 'New',
      created_at: now,
    };
    const guard = visitReferencesGuard('ten_1', {
      project: { project_id: '7', project_id_is_integer: true },
      site: { id: 'site_1', site_code: 'S-1' },
      item: { item_id: '3', item_name: 'Kiosk' },
    });
    const insert = visitInsert(row as never, eventCompanions('ten_1', event, sql`(e.type = 'ticket.created')`), guard);
    const { compiled, reusable } = compileCreateWithKey(db, ref, insert, snapshot);
    expect(reusable).toBe(true);
    expect(compiled.sql).toContain('event_deliveries');
    expect(compiled.sql).toContain('(select holds from guard)');
    // Without a key: the insert with its companions alone.
    const alone = compileSingleRowInsert(db, insert);
    expect(alone.reusable).toBe(true);
    expect(alone.compiled.sql).toContain('event_deliveries');
    expect(alone.compiled.sql).toContain('(select holds from guard)');
  });

  it("reuses a site's insert without a key", () => {
    expect(compileSingleRowInsert(db, siteInsert('S-2')).reusable).toBe(true);
  });
});
