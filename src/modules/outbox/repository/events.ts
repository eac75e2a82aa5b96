import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { jsonb } from '../../../db/json.js';
import type { EventRow } from '../../../db/schema.js';
import type { Executor } from '../../../db/executor.js';
import type { CompanionWrites } from '../../../db/single-row-insert.js';
import { newId } from '../../../lib/ids.js';
import type { ClaimedDelivery } from '../types.js';

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
      returning id, subscription_id, attempts, round_start
    )`;
}

/**
 * What the statement that writes an event returns of it (`queuedDeliveries` reads it): the event's data as
 * stored and, in its targets' order, each delivery queued with its target's columns that an attempt needs,
 * so that deliveries claimed at birth need not be read back.
 */
const QUEUED = sql`(select json_build_object('data', (select data from event_row),
    'deliveries', coalesce(json_agg(json_build_array(d.id, d.attempts, d.round_start, s.id, s.target_url,
      s.is_active, s.signing_version, s.secret_sealed) order by s.seq), '[]'))
  from event_deliveries d join webhook_subscriptions s on s.id = d.subscription_id)`;

type QueuedRow = [string, number, number, string, string, boolean, 'legacy' | 'v1', string | null];

/** The deliveries an event's statement queued (`QUEUED`), as a worker delivers them; none when it wrote none. */
export function queuedDeliveries(tenantId: string, event: NewEventRow, queued: unknown): ClaimedDelivery[] {
  if (!queued) return [];
  const { data, deliveries } = queued as { data: unknown; deliveries: QueuedRow[] };
  const stored = {
    id: event.id,
    tenant_id: tenantId,
    type: event.type,
    occurred_at: event.occurredAt,
    resource_type: event.resourceType,
    resource_id: event.resourceId,
    payload_version: event.payloadVersion,
    data,
  };
  return deliveries.map(([id, attempts, roundStart, subscriptionId, targetUrl, isActive, signingVersion, secret]) => ({
    id,
    tenant_id: tenantId,
    attempt: attempts,
    round_start: roundStart,
    event: stored,
    subscription: {
      id: subscriptionId,
      target_url: targetUrl,
      is_active: isActive,
      signing_version: signingVersion,
      secret_sealed: secret,
    },
  }));
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
 * row's statement, only when the row is inserted; the statement returns the deliveries queued (claimed
 * already with `claim`) as `queuedDeliveries` reads them.
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
    outcome: QUEUED,
  };
}

/**
 * Inserts the event and, in the same statement, its deliveries (`eventWrites`: claimed already with `claim`).
 * Returns the event and the deliveries queued.
 */
export async function insertEventWithDeliveries(
  tx: Executor,
  tenantId: string,
  event: NewEventRow,
  published: RawBuilder<SqlBool>,
  claim: ClaimedAtBirth | undefined,
): Promise<{ event: EventRow; deliveries: ClaimedDelivery[] }> {
  const result = await sql<EventRow & { queued: unknown }>`
    with ${eventWrites(tenantId, event, published, sql``, claim, newDeliveryIds())}
    select event_row.*, ${QUEUED} as queued from event_row`.execute(tx);
  const { queued, ...row } = result.rows[0]!;
  return { event: row as EventRow, deliveries: queuedDeliveries(tenantId, event, queued) };
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
