import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { jsonb } from '../../../db/json.js';
import type { EventRow } from '../../../db/schema.js';
import type { Executor } from '../../../db/executor.js';
import type { CompanionWrites } from '../../../db/single-row-insert.js';
import { newId } from '../../../lib/ids.js';

export interface NewEventRow {
  id: string;
  type: string;
  occurredAt: Date;
  resourceType: string;
  resourceId: string;
  payloadVersion: string;
  data: unknown;
}

/**
 * Delivery ids made by the service for each event, one per target up to this many: PostgreSQL's own
 * (below) cost a fifth to a quarter of a visit create's statement. Tenants rarely have more targets for
 * one event type; past these, the ids are made in SQL.
 */
const DELIVERY_IDS_PER_EVENT = 4;

/**
 * A new delivery id made in SQL, for the targets past `DELIVERY_IDS_PER_EVENT`: `dlv_` and 128 bits in
 * lib/ids.ts's lower-case Crockford base32 (26 characters, the last two bits zero), the bits drawn from two
 * gen_random_uuid() (a CSPRNG) through sha256. `s.id` ties it to each target's row, so that PostgreSQL
 * evaluates it per row rather than once for the statement.
 */
const NEW_DELIVERY_ID = sql<string>`(select 'dlv_' || string_agg(
    substr('0123456789abcdefghjkmnpqrstvwxyz', 1 + substring(r.bits from i * 5 + 1 for 5)::bit(5)::int, 1), '' order by i)
  from (select ('x' || encode(substring(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())
    || convert_to(s.id, 'UTF8')) from 1 for 16), 'hex'))::bit(128) || B'00' as bits) r, generate_series(0, 25) i)`;

/** Deliveries queued already claimed for their first attempt by a worker of this process (outbox/wake-workers.ts). */
export interface ClaimedAtBirth {
  claimedAt: Date;
  leasedUntil: Date;
}

/**
 * The event's writes as common table expressions: `event_row` inserts the event once per row of `from`
 * (no `from`: once), `event_deliveries` queues one delivery of it per active target of the tenant
 * subscribed to its type for which `published` holds (`published` reads the event as `e`, the target as
 * `s` and the tenant as `t`), in the targets' creation order: due now, or, with `claim`, claimed for their
 * first attempt as `claimDeliveries` would claim them (the same text either way: the claim's values are
 * null without one).
 */
function eventWrites(
  tenantId: string,
  event: NewEventRow,
  published: RawBuilder<SqlBool>,
  from: RawBuilder<unknown>,
  claim: ClaimedAtBirth | undefined,
  deliveryIds: readonly string[],
): RawBuilder<unknown> {
  return sql`event_row as (
      insert into events (id, tenant_id, type, occurred_at, resource_type, resource_id, payload_version, data)
      select ${event.id}, ${tenantId}, ${event.type}, ${event.occurredAt}, ${event.resourceType}, ${event.resourceId},
        ${event.payloadVersion}, ${jsonb(event.data)} ${from}
      returning *
    ), event_deliveries as (
      insert into webhook_deliveries (id, tenant_id, event_id, event_type, subscription_id, status,
        attempts, claimed_at, leased_until, next_attempt_at, created_at, updated_at)
      select coalesce((${deliveryIds}::text[])[row_number() over (order by s.seq)], ${NEW_DELIVERY_ID}),
        s.tenant_id, e.id, e.type, s.id, 'pending',
        case when c.leased_until is null then 0 else 1 end, c.claimed_at, c.leased_until,
        coalesce(c.leased_until, e.occurred_at), e.occurred_at, e.occurred_at
      from event_row e
      cross join (select ${claim?.claimedAt ?? null}::timestamptz as claimed_at,
        ${claim?.leasedUntil ?? null}::timestamptz as leased_until) c
      join webhook_subscriptions s on s.tenant_id = ${tenantId} and s.is_active and e.type = any(s.event_types)
      join tenants t on t.id = s.tenant_id
      where ${published}
      order by s.seq
      returning 1
    )`;
}

/** Ids for the event's first deliveries, made here (`DELIVERY_IDS_PER_EVENT`). */
function newDeliveryIds(): string[] {
  return Array.from({ length: DELIVERY_IDS_PER_EVENT }, () => newId('dlv'));
}

/** The placeholders' values of `eventWrites` in order (`published` and `from` have none). */
function eventWritesParameters(
  tenantId: string,
  event: NewEventRow,
  claim: ClaimedAtBirth | undefined,
  deliveryIds: readonly string[],
): unknown[] {
  return [
    event.id,
    tenantId,
    event.type,
    event.occurredAt,
    event.resourceType,
    event.resourceId,
    event.payloadVersion,
    JSON.stringify(event.data),
    deliveryIds,
    claim?.claimedAt ?? null,
    claim?.leasedUntil ?? null,
    tenantId,
  ];
}

/**
 * The event and its deliveries as the companions of the insert of the row it is about: written in that
 * row's statement, only when the row is inserted; `companion_rows` counts the deliveries queued (claimed
 * already with `claim`).
 */
export function eventCompanions(
  tenantId: string,
  event: NewEventRow,
  published: RawBuilder<SqlBool>,
  claim?: ClaimedAtBirth,
): CompanionWrites {
  const deliveryIds = newDeliveryIds();
  return {
    shape: 'event',
    ctes: eventWrites(tenantId, event, published, sql`from inserted`, claim, deliveryIds),
    parameters: eventWritesParameters(tenantId, event, claim, deliveryIds),
    counted: 'event_deliveries',
  };
}

/**
 * Inserts the event and, in the same statement, its deliveries (`eventWrites`: claimed already with `claim`).
 * Returns the event and how many deliveries were queued.
 */
export async function insertEventWithDeliveries(
  tx: Executor,
  tenantId: string,
  event: NewEventRow,
  published: RawBuilder<SqlBool>,
  claim: ClaimedAtBirth | undefined,
): Promise<{ event: EventRow; deliveries: number }> {
  const result = await sql<EventRow & { deliveries: number }>`
    with ${eventWrites(tenantId, event, published, sql``, claim, newDeliveryIds())}
    select event_row.*, (select count(*) from event_deliveries)::int as deliveries from event_row`.execute(tx);
  const { deliveries, ...row } = result.rows[0]!;
  return { event: row as EventRow, deliveries };
}

export async function listEventsOfResource(db: Executor, tenantId: string, resourceId: string): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('resource_id', '=', resourceId)
    .orderBy('seq')
    .execute();
}
