/**
 * The database's own tenancy keys (migration 0010): a delivery belongs to a target of its own tenant, and a
 * visit to its tenant's project and item. Rows written past the service, as a faulty release or a hand-made
 * fix could, are refused by PostgreSQL itself.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { tenantWithToken } from '../helpers/tenants.js';
import { type VisitTenant, visitTenant } from '../helpers/visits.js';
import {
  type DeliveryHarness,
  readDeliveries,
  recordTicketCreated,
  startDeliveryHarness,
  type TestReceiver,
} from '../helpers/webhooks.js';

let harness: DeliveryHarness;
let t: TestApp;
let receiver: TestReceiver;
beforeAll(async () => {
  // Its worker is never started: the deliveries written here are only read back.
  harness = await startDeliveryHarness({}, { started: false });
  ({ t, receiver } = harness);
});
afterAll(async () => harness?.close());

/** A new target of the tenant, subscribed to ticket.created. */
async function subscribe(token: string): Promise<string> {
  const subscribed = await t.http.post('/api/v1/webhook-subscriptions', {
    token,
    json: { targetUrl: receiver.endpoint().url, eventTypes: ['ticket.created'], secret: 'a shared secret, 16+' },
  });
  expect(subscribed.status, subscribed.text).toBe(201);
  return subscribed.body.data.id;
}

/** A tenant with one target subscribed to ticket.created. */
async function subscribedTenant(): Promise<{ tenantId: string; token: string; subscriptionId: string }> {
  const tenant = await tenantWithToken(t);
  return { tenantId: tenant.tenantId, token: tenant.token, subscriptionId: await subscribe(tenant.token) };
}

/** The SQLSTATE a statement fails with (undefined when it succeeds). */
async function sqlState(statement: ReturnType<typeof sql>): Promise<string | undefined> {
  try {
    await statement.execute(t.database.db);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

it("refuses a delivery to another tenant's target, and takes one to the event's tenant's own", async () => {
  const owner = await subscribedTenant();
  const other = await subscribedTenant();
  const event = await recordTicketCreated(t, owner.tenantId);
  const [queued] = await readDeliveries(t, { eventId: event.id });
  expect(queued).toBeDefined();

  // A second target of the owner: the event has no delivery to it yet (event and target are unique together).
  const second = await subscribe(owner.token);
  const deliveryTo = (id: string, tenantId: string, subscriptionId: string) =>
    sql`insert into webhook_deliveries (id, tenant_id, event_id, event_type, subscription_id, status,
        next_attempt_at, created_at, updated_at)
      values (${id}, ${tenantId}, ${event.id}, 'ticket.created', ${subscriptionId}, 'pending', now(), now(), now())`;
  // A target of another tenant than the delivery's, either way round: no such target of that tenant.
  expect(await sqlState(deliveryTo('dlv_cross_1', owner.tenantId, other.subscriptionId))).toBe('23503');
  expect(await sqlState(deliveryTo('dlv_cross_2', other.tenantId, second))).toBe('23503');
  // An unknown target or tenant, as before.
  expect(await sqlState(deliveryTo('dlv_cross_3', owner.tenantId, 'whs_unknown'))).toBe('23503');
  expect(await sqlState(deliveryTo('dlv_cross_4', 'tnt_unknown', second))).toBe('23503');
  // The owner's own target takes it.
  expect(await sqlState(deliveryTo('dlv_own_1', owner.tenantId, second))).toBeUndefined();
});

it("refuses a visit naming another tenant's project or item, or an unknown tenant", async () => {
  const owner = await visitTenant(t, { assets: 0 });
  const other = await visitTenant(t, { assets: 0 });
  const ids = async (v: VisitTenant) =>
    (
      await sql<{ project_id: string; item_id: string }>`select p.project_id, i.item_id from projects p, items i
        where p.tenant_id = ${v.tenantId} and i.tenant_id = ${v.tenantId} and i.item_name = ${v.itemName}`.execute(
        t.database.db,
      )
    ).rows[0]!;
  const mine = await ids(owner);
  const theirs = await ids(other);
  const visitOf = (tenantId: string, projectId: string, itemId: string) =>
    sql`insert into site_visits (id, tenant_id, site_id, description, service_type, job_instructions, project_id,
        item_id, start_date, due_date, are_parts_required, scheduling_rule, status)
      values (${`visit_keys_${randomUUID()}`}, ${tenantId}, ${owner.siteId}, 'd', 'Break / Fix', 'j', ${projectId},
        ${itemId}, now(), now(), false, 'Date Range', 'New')`;
  expect(await sqlState(visitOf(owner.tenantId, theirs.project_id, mine.item_id))).toBe('23503');
  expect(await sqlState(visitOf(owner.tenantId, mine.project_id, theirs.item_id))).toBe('23503');
  expect(await sqlState(visitOf('tnt_unknown', mine.project_id, mine.item_id))).toBe('23503');
  expect(await sqlState(visitOf(owner.tenantId, mine.project_id, mine.item_id))).toBeUndefined();
});
