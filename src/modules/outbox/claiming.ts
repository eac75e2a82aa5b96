/**
 * Claiming due deliveries from the queue, in two statements so that the worker can choose fairly between
 * them (fair-claim.ts): first the candidates, a few of the earliest due of every subscription that has
 * any, without locks; then the chosen ones, locked with SKIP LOCKED and leased. Another worker may take
 * a candidate in between: the claim checks again that each row is still due and unlocked, and simply
 * claims fewer. Both statements run on PGlite and PostgreSQL alike.
 */
import { type Kysely, sql } from 'kysely';
import { prepared } from '../../db/prepared-statements.js';
import type { Database } from '../../db/schema.js';
import { readInTurnBatch, runInTurnBatch } from '../../db/turn-batches.js';
import { type ClaimCandidate, chooseFairly, destinationOf, type InFlight, type Slots } from './fair-claim.js';
import { lostAttemptEntry } from './repository/queue.js';
import type { ClaimedDelivery } from './types.js';

interface DueCandidates {
  /** In due order (earliest first). */
  candidates: ClaimCandidate[];
  /** The earliest `next_attempt_at` after `now` of a pending delivery (a retry, a lease), if any. */
  nextDueAt: Date | undefined;
}

/**
 * A row is due when it is pending and its time has come, unless its last lease ran out on the last
 * attempt of its budget (those are failExhaustedLeases' to fail). A lease that ran out is due again.
 */
const isDue = (now: Date, maxAttempts: number) =>
  sql<boolean>`d.status = 'pending' and d.next_attempt_at <= ${now}
    and (d.leased_until is null or d.attempts - d.round_start < ${maxAttempts})`;

/** How many candidates per free slot the worker is offered (beyond each tenant's first). */
const CANDIDATES_PER_SLOT = 4;

/**
 * The due deliveries a worker with `slots` free slots may choose from, with their destinations, and when
 * the next pending delivery falls due. The subscriptions with pending deliveries are found by a loose
 * index scan (one probe of webhook_deliveries_pending_subscription per subscription) and each gives at
 * most `slots` of its earliest due, so a backlog of thousands behind one subscription costs `slots`
 * rows. Of those, the worker gets every tenant's earliest (so a tenant with one due delivery is seen
 * however many others fell due before it) and the first `4 × slots` taken in turns: by tenant, and
 * within a tenant by subscription.
 */
async function findDueCandidates(
  db: Kysely<Database>,
  now: Date,
  slots: number,
  maxAttempts: number,
): Promise<DueCandidates> {
  const rows = await readInTurnBatch(
    db,
    sql<{
      id: string | null;
      tenant_id: string;
      target_url: string;
      next_due_at: Date | null;
    }>`
    with recursive pending (subscription_id) as (
      (select subscription_id from webhook_deliveries where status = 'pending' order by subscription_id limit 1)
      union all
      select (
        select d.subscription_id from webhook_deliveries d
        where d.status = 'pending' and d.subscription_id > pending.subscription_id
        order by d.subscription_id limit 1
      )
      from pending where pending.subscription_id is not null
    ),
    due as (
      select c.id, c.tenant_id, c.next_attempt_at, s.target_url,
        row_number() over (partition by p.subscription_id order by c.next_attempt_at, c.id) as subscription_rank
      from pending p
      join webhook_subscriptions s on s.id = p.subscription_id
      cross join lateral (
        select d.id, d.tenant_id, d.next_attempt_at from webhook_deliveries d
        where d.subscription_id = p.subscription_id and ${isDue(now, maxAttempts)}
        order by d.next_attempt_at
        limit ${slots}
      ) c
    ),
    ranked as (
      select turns.*, row_number() over (order by tenant_rank, next_attempt_at, id) as overall_rank
      from (
        select due.*,
          row_number() over (partition by tenant_id order by subscription_rank, next_attempt_at, id) as tenant_rank
        from due
      ) turns
    ),
    candidates as (
      select id, tenant_id, next_attempt_at, target_url from ranked
      where tenant_rank = 1 or overall_rank <= ${slots * CANDIDATES_PER_SLOT}
    ),
    upcoming as (
      select min(next_attempt_at) as next_due_at from webhook_deliveries
      where status = 'pending' and next_attempt_at > ${now}
    )
    select candidates.id, candidates.tenant_id, candidates.target_url, upcoming.next_due_at
    from upcoming left join candidates on true
    order by candidates.next_attempt_at, candidates.id ${prepared()}`,
    undefined,
  );
  const next = rows[0]?.next_due_at;
  const candidates = rows
    .filter((row) => row.id !== null)
    .map((row) => ({ id: row.id!, tenantId: row.tenant_id, destination: destinationOf(row.target_url) }));
  return { candidates, nextDueAt: next ? new Date(next) : undefined };
}

/** What one of the worker's claims found and took. */
export interface ClaimRound {
  claimed: ClaimedDelivery[];
  /** Another worker took some of those chosen in between (choosing again may find others). */
  lostRace: boolean;
  /** The tenants of the due deliveries left waiting. */
  waiting: Set<string>;
  nextDueAt: Date | undefined;
}

/**
 * One claim of a worker with `room` free slots: the due candidates, the fair choice among them given what is
 * in flight (fair-claim.ts), and the claim of those chosen.
 */
export async function claimFairly(
  db: Kysely<Database>,
  round: { now: Date; leaseUntil: Date; maxAttempts: number; room: number; inFlight: InFlight; slots: Slots },
): Promise<ClaimRound> {
  const { now, leaseUntil, maxAttempts } = round;
  const { candidates, nextDueAt } = await findDueCandidates(db, now, round.room, maxAttempts);
  const chosen = chooseFairly(candidates, round.inFlight, round.slots);
  const ids = chosen.map((candidate) => candidate.id);
  const claimed = await claimDeliveries(db, ids, now, leaseUntil, maxAttempts);
  const taken = new Set(claimed.map((delivery) => delivery.id));
  const waiting = new Set(candidates.filter((candidate) => !taken.has(candidate.id)).map((c) => c.tenantId));
  return { claimed, lostRace: claimed.length < chosen.length, waiting, nextDueAt };
}

/**
 * Claims the chosen deliveries that are still due, for one attempt each: locks them with SKIP LOCKED (so
 * concurrent workers never take the same row), counts the attempt and leases the row until `leaseUntil`.
 * A row whose previous lease ran out without an outcome (its worker died) has that lost attempt logged.
 *
 * Each row is found by primary key alone and checked for due-ness once locked (`locked` is materialized):
 * with the due conditions beside the id, the planner may read a partial index on pending deliveries
 * instead, which holds an entry for every version of every row claimed since the last vacuum. A statement
 * per row, sent together (one round trip, one transaction: `runInTurnBatch`), keeps the prepared
 * statement's generic plan on the primary key however small the queue was when it was made (see
 * repository/attempts.ts's `recordAttempts`).
 */
async function claimDeliveries(
  db: Kysely<Database>,
  ids: readonly string[],
  now: Date,
  leaseUntil: Date,
  maxAttempts: number,
): Promise<ClaimedDelivery[]> {
  const claimed = await Promise.all(
    ids.map((id) =>
      runInTurnBatch(
        db,
        sql<ClaimedRow>`
        with locked as materialized (
          select d.id, d.status, d.next_attempt_at, d.leased_until, d.attempts, d.round_start from webhook_deliveries d
          where d.id = ${id}
          for update skip locked
        ), due as (
          select d.id from locked d where ${isDue(now, maxAttempts)}
        )
        update webhook_deliveries d set
          attempt_log = case when d.leased_until is null then d.attempt_log else d.attempt_log || ${lostAttemptEntry} end,
          attempts = d.attempts + 1,
          claimed_at = ${now},
          leased_until = ${leaseUntil},
          next_attempt_at = ${leaseUntil},
          updated_at = ${now}
        from due, events e, webhook_subscriptions s
        where d.id = due.id and e.id = d.event_id and s.id = d.subscription_id
        returning ${CLAIMED_COLUMNS} ${prepared()}`,
        // The worker's: no tenant's share of connections (db/tenant-shares.ts).
        undefined,
      ),
    ),
  );
  return claimed.flat().map(toClaimedDelivery);
}

/** A claimed delivery's columns: the delivery's, its event's (`e_`) and its target's (`s_`). */
const CLAIMED_COLUMNS = sql`d.id, d.tenant_id, d.attempts, d.round_start,
  e.id as e_id, e.type as e_type, e.occurred_at as e_occurred_at, e.resource_type as e_resource_type,
  e.resource_id as e_resource_id, e.payload_version as e_payload_version, e.data as e_data,
  s.id as s_id, s.target_url as s_target_url, s.is_active as s_is_active, s.signing_version as s_signing_version,
  s.secret_sealed as s_secret_sealed`;

interface ClaimedRow {
  id: string;
  tenant_id: string;
  attempts: number;
  round_start: number;
  e_id: string;
  e_type: string;
  e_occurred_at: Date;
  e_resource_type: string;
  e_resource_id: string;
  e_payload_version: string;
  e_data: unknown;
  s_id: string;
  s_target_url: string;
  s_is_active: boolean;
  s_signing_version: 'legacy' | 'v1';
  s_secret_sealed: string | null;
}

function toClaimedDelivery(row: ClaimedRow): ClaimedDelivery {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    attempt: row.attempts,
    round_start: row.round_start,
    event: {
      id: row.e_id,
      tenant_id: row.tenant_id,
      type: row.e_type,
      occurred_at: new Date(row.e_occurred_at),
      resource_type: row.e_resource_type,
      resource_id: row.e_resource_id,
      payload_version: row.e_payload_version,
      data: row.e_data,
    },
    subscription: {
      id: row.s_id,
      target_url: row.s_target_url,
      is_active: row.s_is_active,
      signing_version: row.s_signing_version,
      secret_sealed: row.s_secret_sealed,
    },
  };
}
