/**
 * An event's deliveries are written for the tenant's active subscriptions only (outbox/repository/events.ts),
 * and read them through an index of the active ones (migration 0012): a tenant that opened and closed
 * thousands of sandbox listeners, each leaving an inactive subscription row, does not make every event of
 * its own (in a batch's transaction shared with other tenants' creates) read them all.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';
import { readDeliveries, recordTicketCreated, TestReceiver, testWebhookConfig } from '../helpers/webhooks.js';

const CLOSED = 3_000;

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

/** Every index the plan of `query` reads, by name. */
async function indexesRead(query: ReturnType<typeof sql>): Promise<string[]> {
  const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) ${query}`.execute(t.database.db);
  return [...JSON.stringify(rows[0]!['QUERY PLAN']).matchAll(/"Index Name":"([^"]+)"/g)].map((match) => match[1]!);
}

it("reads only the tenant's active subscriptions, however many closed ones it has", async () => {
  const tenant = await tenantWithToken(t);
  const subscribed = await t.http.post('/api/v1/webhook-subscriptions', {
    token: tenant.token,
    json: { targetUrl: receiver.endpoint().url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
  });
  expect(subscribed.status, subscribed.text).toBe(201);
  const activeId: string = subscribed.body.data.id;
  // What closed listeners leave: inactive subscriptions of the tenant, for the same events.
  await sql`insert into webhook_subscriptions (id, tenant_id, target_url, event_types, is_active, signing_version,
      secret_sealed, created_at, updated_at, deactivated_reason)
    select 'sub_closed_' || n, tenant_id, target_url, event_types, false, signing_version, secret_sealed,
      created_at, updated_at, 'listener closed'
    from webhook_subscriptions, generate_series(1, ${CLOSED}) n where id = ${activeId}`.execute(t.database.db);
  await sql`analyze webhook_subscriptions`.execute(t.database.db);

  const event = await recordTicketCreated(t, tenant.tenantId);
  expect((await readDeliveries(t, { eventId: event.id })).map((delivery) => delivery.subscriptionId)).toEqual([
    activeId,
  ]);
  // The shape of the deliveries' join (events.ts): the tenant's active subscriptions, in order.
  const targets = sql`select s.id from webhook_subscriptions s
    where s.tenant_id = ${tenant.tenantId} and s.is_active and ${'ticket.created'} = any(s.event_types)
    order by s.seq`;
  expect(await indexesRead(targets)).toEqual(['webhook_subscriptions_active_seq']);
});
