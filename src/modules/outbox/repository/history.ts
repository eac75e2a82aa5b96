/**
 * The delivery history's retention: finished deliveries, events no delivery names any more, and closed
 * sandbox listeners, once older than the retention. Rows are walked in `seq` order (the order they were
 * written) a chunk at a time, through indexes that exist for the queue and the lists, so the purge adds no
 * index to the tables every create writes. Each chunk is one autocommitted statement: a purge never holds
 * many rows' locks for long, and processes purging at once only delete a row once.
 */
import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../../../db/executor.js';

/** What one chunk of a walk did and saw. */
export interface PurgedChunk {
  purged: number;
  /** The chunk's last `seq`, when every row of it was older than the cutoff; else undefined (the walk stops). */
  oldThrough: number | undefined;
  /** The `seq` of the chunk's first row old enough but kept (a pending delivery, an event still named). */
  firstKept: number | undefined;
  /** Rows the chunk read (fewer than asked: the walk reached the newest row). */
  seen: number;
}

interface ChunkRow {
  purged: number | string;
  last_seq: number | string | null;
  first_kept: number | string | null;
  seen: number | string;
  all_old: boolean | null;
}

function chunkOf(row: ChunkRow | undefined): PurgedChunk {
  const oldThrough = row?.all_old && row.last_seq !== null ? Number(row.last_seq) : undefined;
  const firstKept = row?.first_kept === null || row?.first_kept === undefined ? undefined : Number(row.first_kept);
  return { purged: Number(row?.purged ?? 0), oldThrough, firstKept, seen: Number(row?.seen ?? 0) };
}

/**
 * One chunk: `chunk` selects the rows (`id`, `seq`, `created_at` their date), `gone` deletes those it may
 * (returning their ids); the statement answers what it did and saw.
 */
async function purgeChunk(
  db: Executor,
  chunk: RawBuilder<unknown>,
  gone: RawBuilder<unknown>,
  cutoff: Date,
): Promise<PurgedChunk> {
  const { rows } = await sql<ChunkRow>`
    with chunk as materialized (${chunk}), gone as (${gone})
    select (select count(*) from gone) as purged, (select max(seq) from chunk) as last_seq,
      (select min(c.seq) from chunk c where c.created_at < ${cutoff}
        and not exists (select 1 from gone g where g.id = c.id)) as first_kept,
      (select count(*) from chunk) as seen, (select bool_and(created_at < ${cutoff}) from chunk) as all_old
  `.execute(db);
  return chunkOf(rows[0]);
}

/**
 * Deletes the finished deliveries (succeeded or failed; never pending, which a worker or the operator's retry
 * may still be working on) among the `size` deliveries after `afterSeq`, if created before `cutoff`. A
 * delivery reopened by the operator at the same moment is pending when the delete checks it, and stays.
 */
export async function purgeDeliveriesChunk(
  db: Executor,
  afterSeq: number,
  size: number,
  cutoff: Date,
): Promise<PurgedChunk> {
  return purgeChunk(
    db,
    sql`select id, seq, created_at from webhook_deliveries where seq > ${afterSeq} order by seq limit ${size}`,
    sql`delete from webhook_deliveries d using chunk c
      where d.id = c.id and c.created_at < ${cutoff} and d.status <> 'pending' returning d.id`,
    cutoff,
  );
}

/**
 * Deletes the tenant's events, among its `size` events after `afterSeq`, written before `cutoff` that no
 * delivery names (deliveries are written with their event, in its statement, so none can come later). An
 * event is dated by `occurred_at`, the service's clock when it was written, as its deliveries are.
 */
export async function purgeEventsChunk(
  db: Executor,
  tenantId: string,
  afterSeq: number,
  size: number,
  cutoff: Date,
): Promise<PurgedChunk> {
  return purgeChunk(
    db,
    sql`select id, seq, occurred_at as created_at from events
      where tenant_id = ${tenantId} and seq > ${afterSeq} order by seq limit ${size}`,
    sql`delete from events e using chunk c
      where e.id = c.id and c.created_at < ${cutoff}
        and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
      returning e.id`,
    cutoff,
  );
}

/** Every tenant's id: the events are walked a tenant at a time, along the index they are listed by. */
export async function listTenantIds(db: Executor): Promise<string[]> {
  return (await db.selectFrom('tenants').select('id').orderBy('id').execute()).map((row) => row.id);
}

/**
 * Deletes up to `size` sandbox listeners closed before `cutoff` that no delivery names any more, with the
 * inactive subscription row each was a target by. Answers how many.
 */
export async function purgeClosedListeners(db: Executor, size: number, cutoff: Date): Promise<number> {
  const { rows } = await sql<{ purged: number | string }>`
    with closed as (
      select l.id from webhook_listeners l
      where l.state = 'closed' and l.closed_at < ${cutoff}
        and not exists (select 1 from webhook_deliveries d where d.subscription_id = l.id)
      limit ${size}
    ), listeners as (
      delete from webhook_listeners l using closed c where l.id = c.id returning l.id
    ), subscriptions as (
      delete from webhook_subscriptions s using listeners l where s.id = l.id returning 1
    )
    select count(*) as purged from subscriptions
  `.execute(db);
  return Number(rows[0]?.purged ?? 0);
}
