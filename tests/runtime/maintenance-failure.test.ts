/**
 * A maintenance pass that fails partway has still deleted what its earlier steps deleted (each step commits as it
 * goes), and the metrics count it: they counted a pass's history purge only once the whole purge returned, so a
 * pass failing at its last step showed the deliveries and events it had deleted nowhere. The failure is injected
 * through the database the pass is handed (a Kysely plugin refusing the closed listeners' purge, the last step);
 * the app's clock dates what it writes (a database of this file's own).
 */
import { randomUUID } from 'node:crypto';
import type { KyselyPlugin, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { Maintenance } from '../../src/runtime/maintenance.js';
import { capturedLog, LOG_LEVEL } from '../helpers/log-lines.js';
import { createVisit, visitBody, visitTenant } from '../helpers/visits.js';
import { type DeliveryHarness, startDeliveryHarness } from '../helpers/webhooks.js';

const DAY = 24 * 3600 * 1000;
const RETENTION = 30 * DAY;
const clock = new ManualClock(new Date('2020-01-01T00:00:00Z'));

let h: DeliveryHarness;
beforeAll(async () => {
  h = await startDeliveryHarness({ clock }, { started: false });
});
afterAll(async () => h?.close());

/** Refuses every statement whose text holds `statement` until healed: a database failing at that step of a pass. */
function failing(statement: string): { plugin: KyselyPlugin; heal(): void } {
  let broken = true;
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      if (broken && JSON.stringify(node).includes(statement)) throw new Error(`injected failure: ${statement}`);
      return node;
    },
    async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return result;
    },
  };
  return { plugin, heal: () => (broken = false) };
}

/** The maintenance samples of GET /metrics (the operator's), by series. */
async function maintenanceMetrics(): Promise<Record<string, number>> {
  const text = (await h.t.http.get('/metrics', { token: h.t.adminToken })).text;
  return Object.fromEntries(
    [...text.matchAll(/^(maintenance_\w+\{[^}]*\}) (\d+)$/gm)].map((match) => [match[1]!, Number(match[2])]),
  );
}

const count = async (table: 'events' | 'webhook_deliveries' | 'idempotency_keys', tenantId: string) =>
  Number(
    (
      await h.t.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
    ).n,
  );

it('counts what a failing pass deleted before its failure, and the next pass does not count it again', async () => {
  const { t } = h;
  const v = await visitTenant(t);
  const subscribed = await t.http.post('/api/v1/webhook-subscriptions', {
    token: v.fullToken,
    json: { targetUrl: h.receiver.endpoint().url, eventTypes: ['ticket.created'], secret: `whsec ${randomUUID()}` },
  });
  expect(subscribed.status).toBe(201);
  // Two visits, one created under an Idempotency-Key: two delivered events and a key, all past their time below.
  await createVisit(t, v);
  const keyed = await t.http.post('/api/v1/site-visits', {
    token: v.fullToken,
    headers: { 'idempotency-key': 'maintenance-failure-1' },
    json: visitBody(v),
  });
  expect(keyed.status).toBe(201);
  await h.worker.processAll();
  expect([await count('webhook_deliveries', v.tenantId), await count('events', v.tenantId)]).toEqual([2, 2]);
  expect(await count('idempotency_keys', v.tenantId)).toBe(1);
  clock.set(new Date('2020-06-01T00:00:00Z'));

  // The last step, the closed listeners' purge, fails: the keys, deliveries and events went before it.
  const log = capturedLog('warn');
  const listenersPurge = failing('delete from webhook_listeners');
  const db = t.database.db.withPlugin(listenersPurge.plugin);
  const registry = t.metrics.registry;
  const maintenance = new Maintenance(db, clock, log.logger, { deliveryRetentionMs: RETENTION, registry });
  await maintenance.runOnce();

  expect(await count('idempotency_keys', v.tenantId)).toBe(0);
  expect([await count('webhook_deliveries', v.tenantId), await count('events', v.tenantId)]).toEqual([0, 0]);
  const purged = {
    'maintenance_purged_rows_total{kind="idempotency_keys"}': 1,
    'maintenance_purged_rows_total{kind="orphan_blobs"}': 0,
    'maintenance_purged_rows_total{kind="deliveries"}': 2,
    'maintenance_purged_rows_total{kind="events"}': 2,
    'maintenance_purged_rows_total{kind="listeners"}': 0,
  };
  expect(await maintenanceMetrics()).toEqual({
    'maintenance_passes_total{outcome="completed"}': 0,
    'maintenance_passes_total{outcome="failed"}': 1,
    ...purged,
  });
  const warned = log.lines.find((line) => line.msg === 'maintenance pass failed');
  expect(warned).toMatchObject({
    level: LOG_LEVEL.warn,
    err: { message: 'injected failure: delete from webhook_listeners' },
    purgedBeforeFailure: { idempotency_keys: 1, orphan_blobs: 0, deliveries: 2, events: 2, listeners: 0 },
  });

  // The database answers again: the next pass completes, finds nothing left and counts nothing twice.
  listenersPurge.heal();
  await maintenance.runOnce();
  expect(await maintenanceMetrics()).toEqual({
    'maintenance_passes_total{outcome="completed"}': 1,
    'maintenance_passes_total{outcome="failed"}': 1,
    ...purged,
  });
});
