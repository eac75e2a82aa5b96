/**
 * WEBHOOK_HISTORY_RETENTION: how long the delivery history is kept. Without it every event (a copy of the visit
 * it is about, the client's own data), every delivery with its attempt log, and every closed sandbox listener
 * stayed for ever: tables that every visit create grows, read by the operator's views, and personal data
 * kept past any need.
 *
 * A pass purges what was created before `now - retention`, oldest first: finished deliveries, then events
 * that no delivery names any more, then listeners closed that long ago. Each walk remembers where the rows it
 * has deleted end (`seq`), up to the first old row it had to keep (a delivery still pending, an event whose
 * deliveries are not purged yet), so a later pass reads what aged since and the few kept rows again. A pass
 * reads at most `chunksPerPass` chunks of each walk: a first pass over years of history is spread over passes.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import * as history from './repository/history.js';

export interface HistoryRetentionOptions {
  /** Milliseconds a delivery, an event or a closed listener is kept after it was written. */
  retentionMs: number;
  chunkSize?: number;
  chunksPerPass?: number;
}

/** What one pass deleted. */
export interface HistoryPurged {
  deliveries: number;
  events: number;
  listeners: number;
}

/**
 * Told of each chunk's deletions as it commits: a pass that fails later (a statement timing out, the connection
 * lost) has still deleted them, and its caller counts them.
 */
export type PurgeProgress = (kind: keyof HistoryPurged, rows: number) => void;

export class DeliveryHistoryRetention {
  private deliveriesThrough = 0;
  private readonly eventsThrough = new Map<string, number>();
  private readonly chunkSize: number;
  private readonly chunksPerPass: number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: HistoryRetentionOptions,
  ) {
    this.chunkSize = options.chunkSize ?? 1000;
    this.chunksPerPass = options.chunksPerPass ?? 50;
  }

  async purge(now: Date, progress: PurgeProgress = () => undefined): Promise<HistoryPurged> {
    const cutoff = new Date(now.getTime() - this.options.retentionMs);
    const deliveries = await this.walk(
      this.deliveriesThrough,
      (after) => history.purgeDeliveriesChunk(this.db, after, this.chunkSize, cutoff),
      (rows) => progress('deliveries', rows),
    );
    this.deliveriesThrough = deliveries.through;
    let events = 0;
    for (const tenantId of await history.listTenantIds(this.db)) {
      const walked = await this.walk(
        this.eventsThrough.get(tenantId) ?? 0,
        (after) => history.purgeEventsChunk(this.db, tenantId, after, this.chunkSize, cutoff),
        (rows) => progress('events', rows),
      );
      this.eventsThrough.set(tenantId, walked.through);
      events += walked.purged;
    }
    const listeners = await history.purgeClosedListeners(this.db, this.chunkSize * this.chunksPerPass, cutoff);
    progress('listeners', listeners);
    return { deliveries: deliveries.purged, events, listeners };
  }

  /**
   * Chunks from `through` on, while each was old through its end and full; answers where the next pass
   * starts: before the first row kept, or where the old rows end. A chunk with a younger row is read again
   * by the next pass, which costs at most a chunk.
   */
  private async walk(
    through: number,
    chunk: (afterSeq: number) => Promise<history.PurgedChunk>,
    deleted: (rows: number) => void,
  ): Promise<{ through: number; purged: number }> {
    let purged = 0;
    let cursor = through;
    let firstKept: number | undefined;
    for (let chunks = 0; chunks < this.chunksPerPass; chunks++) {
      const done = await chunk(cursor);
      deleted(done.purged);
      purged += done.purged;
      firstKept ??= done.firstKept;
      if (done.oldThrough === undefined) break;
      cursor = done.oldThrough;
      if (done.seen < this.chunkSize) break;
    }
    return { through: firstKept === undefined ? cursor : firstKept - 1, purged };
  }
}
