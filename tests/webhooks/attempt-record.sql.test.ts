/**
 * The statement that records an attempt's outcome (outbox/repository/attempts.ts): fenced on the attempt
 * number and the pending status, so an outcome that comes after the delivery was claimed again or ended
 * changes nothing, and planned on the primary key even as a generic plan made while the queue was empty.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordAttempts, recordStatement } from '../../src/modules/outbox/repository/attempts.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';
import { readDeliveries, recordTicketCreated, TestReceiver, testWebhookConfig } from '../helpers/webhooks.js';

let receiver: TestReceiver;
let t: TestApp;
beforeAll(async () => {
  receiver = await TestReceiver.start();
  t = await startTestApp({ config: { webhook: testWebhookConfig(receiver.port) } });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const succeeded = (deliveryId: string, attempt: number) => ({
  deliveryId,
  entry: { attempt, at: new Date().toISOString(), statusCode: 200, error: null, durationMs: 3 },
  outcome: { status: 'succeeded' as const },
  now: new Date(),
});

/** A pending delivery of a new event, leased to its first attempt as a claim leaves it. */
async function claimedDelivery(): Promise<string> {
  const tenant = await tenantWithToken(t);
  const subscribed = await t.http.post('/api/v1/webhook-subscriptions', {
    token: tenant.token,
    json: { targetUrl: receiver.endpoint().url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
  });
  expect(subscribed.status, subscribed.text).toBe(201);
  const event = await recordTicketCreated(t, tenant.tenantId);
  const [delivery] = await readDeliveries(t, { eventId: event.id });
  await sql`update webhook_deliveries set attempts = 1, claimed_at = now(), leased_until = now() + interval '1 minute'
    where id = ${delivery.deliveryId}`.execute(t.database.db);
  return delivery.deliveryId;
}

it('writes the outcome of the attempt the delivery is leased to, once', async () => {
  const deliveryId = await claimedDelivery();
  // Another attempt's outcome (the delivery was claimed again since): left alone.
  expect(await recordAttempts(t.database.db, [succeeded(deliveryId, 2)])).toEqual([false]);
  expect(await recordAttempts(t.database.db, [succeeded(deliveryId, 1)])).toEqual([true]);
  // The delivery has ended: the same outcome again changes nothing.
  expect(await recordAttempts(t.database.db, [succeeded(deliveryId, 1)])).toEqual([false]);
  const [row] = (
    await sql<{ status: string; attempt_log: unknown[] }>`select status, attempt_log from webhook_deliveries
      where id = ${deliveryId}`.execute(t.database.db)
  ).rows;
  expect(row).toMatchObject({ status: 'succeeded' });
  expect(row!.attempt_log).toHaveLength(1);
});

it('reads the delivery by its primary key in a generic plan, whatever the statistics say', async () => {
  const compiled = recordStatement(succeeded('dlv_none', 1)).compile(t.database.db);
  const parameters = compiled.parameters.map((value) =>
    value === null
      ? 'null'
      : `'${(value instanceof Date ? value.toISOString() : String(value)).replaceAll("'", "''")}'`,
  );
  // One connection throughout (a transaction): the setting, the prepared statement and its plan are a session's.
  const text = await t.database.db.transaction().execute(async (tx) => {
    await sql`set local plan_cache_mode = force_generic_plan`.execute(tx);
    await sql.raw(`prepare attempt_record as ${compiled.sql}`).execute(tx);
    const plan = await sql
      .raw<{ 'QUERY PLAN': string }>(`explain execute attempt_record(${parameters.join(', ')})`)
      .execute(tx);
    await sql`deallocate attempt_record`.execute(tx);
    return plan.rows.map((row) => Object.values(row)[0]).join('\n');
  });
  expect(text).toContain('webhook_deliveries_pkey');
  expect(text).not.toMatch(/webhook_deliveries_(due|pending_subscription)/);
});
