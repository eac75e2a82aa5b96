/**
 * Periodic housekeeping of one process: purges idempotency keys past their replay window, file blobs
 * that an interrupted upload left without a version, and the delivery history past WEBHOOK_HISTORY_RETENTION.
 * Safe to run in every process at once (each pass is idempotent DELETEs). What a pass purged is logged and
 * counted (maintenance_purged_rows_total, maintenance_passes_total): a purge that never ran, or failed at
 * every pass, showed only as tables that kept growing. A pass that fails partway keeps what its earlier steps
 * deleted, so those are counted as they commit, not when the pass ends.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Database } from '../db/schema.js';
import { purgeExpiredIdempotencyKeys } from '../db/idempotency-keys.js';
import type { Clock } from '../lib/clock.js';
import { purgeOrphanBlobs } from '../modules/files/database-store.js';
import { DeliveryHistoryRetention } from '../modules/outbox/history-retention.js';

/** An upload still streaming is younger than this; an older blob without a version is an orphan. */
const ORPHAN_BLOB_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * How far back a pass looks again behind where the last one stopped: a blob is dated by the clock of the
 * process that wrote it, which may be a little behind this one's.
 */
const ORPHAN_SCAN_OVERLAP_MS = 60 * 60 * 1000;

export interface MaintenanceOptions {
  /** WEBHOOK_HISTORY_RETENTION in milliseconds; 0 or absent keeps the delivery history for ever. */
  deliveryRetentionMs?: number;
  intervalMs?: number;
  /** How long after `start()` the first pass runs. */
  firstPassAfterMs?: number;
  /** Where the passes and the rows they purged are counted (the process's metrics). */
  registry?: Registry;
}

/** What a pass deletes, the `kind` of maintenance_purged_rows_total. */
const PURGED_KINDS = ['idempotency_keys', 'orphan_blobs', 'deliveries', 'events', 'listeners'] as const;
type PurgedKind = (typeof PURGED_KINDS)[number];

export class Maintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /**
   * The age limit of this process's last orphan pass: the next looks only at blobs from there on (a
   * blob never loses its version: versions are kept), so a pass costs the blobs of the last interval, not
   * every blob ever stored (hostile-tenant probe: a tenant's tiny uploads made each pass scan millions).
   * Undefined until the first pass, which looks at every blob.
   */
  private orphansExaminedBefore: Date | undefined;
  private readonly history: DeliveryHistoryRetention | undefined;
  private readonly intervalMs: number;
  private readonly firstPassAfterMs: number;
  private readonly retentionMs: number;
  private readonly passes: Counter<'outcome'> | undefined;
  private readonly purged: Counter<'kind'> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: MaintenanceOptions = {},
  ) {
    const { deliveryRetentionMs = 0, intervalMs = 10 * 60 * 1000, firstPassAfterMs = 60 * 1000 } = options;
    this.intervalMs = intervalMs;
    this.firstPassAfterMs = firstPassAfterMs;
    this.retentionMs = deliveryRetentionMs;
    const registers = options.registry ? [options.registry] : undefined;
    if (registers) {
      this.passes = new Counter({
        name: 'maintenance_passes_total',
        help: "This process's maintenance passes (a minute after the start, then every 10 minutes) by outcome: completed, or failed (logged).",
        labelNames: ['outcome'],
        registers,
      });
      for (const outcome of ['completed', 'failed']) this.passes.inc({ outcome }, 0);
      this.purged = new Counter({
        name: 'maintenance_purged_rows_total',
        help: 'Rows deleted by maintenance passes: expired idempotency keys, orphaned file blobs, and past WEBHOOK_HISTORY_RETENTION deliveries, events and closed listeners.',
        labelNames: ['kind'],
        registers,
      });
      for (const kind of PURGED_KINDS) this.purged.inc({ kind }, 0);
    }
    this.history =
      deliveryRetentionMs > 0 ? new DeliveryHistoryRetention(db, { retentionMs: deliveryRetentionMs }) : undefined;
  }

  /**
   * The first pass a minute after the start, then one every interval: with the first an interval away, a
   * process restarted more often than that (deploys, a crash loop, short-lived processes) never purged anything,
   * and its counters read 0 for ten minutes.
   */
  start(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
      this.timer.unref();
      void this.runOnce();
    }, this.firstPassAfterMs);
    this.timer.unref();
  }

  async runOnce(): Promise<void> {
    if (this.running) return this.running;
    // Each step's deletions are committed as it goes (a statement, or a chunk of one walk): they are counted as they
    // happen, so a pass that fails at a later step still shows what it deleted before.
    const deleted = Object.fromEntries(PURGED_KINDS.map((kind) => [kind, 0])) as Record<PurgedKind, number>;
    const count = (kind: PurgedKind, rows: number) => {
      deleted[kind] += rows;
      if (rows > 0) this.purged?.inc({ kind }, rows);
    };
    this.running = (async () => {
      try {
        const purged = await purgeExpiredIdempotencyKeys(this.db, this.clock.now());
        count('idempotency_keys', purged);
        if (purged > 0) this.logger.info({ purged }, 'expired idempotency keys purged');
        const before = new Date(this.clock.now().getTime() - ORPHAN_BLOB_AGE_MS);
        const examined = this.orphansExaminedBefore;
        const from = examined && new Date(examined.getTime() - ORPHAN_SCAN_OVERLAP_MS);
        const orphans = await purgeOrphanBlobs(this.db, before, from);
        this.orphansExaminedBefore = before;
        count('orphan_blobs', orphans);
        if (orphans > 0) this.logger.info({ orphans }, 'orphaned file blobs purged');
        const now = this.clock.now();
        const history = await this.history?.purge(now, count);
        if (history && history.deliveries + history.events + history.listeners > 0) {
          // The bound says which rows went: those created before it.
          const createdBefore = new Date(now.getTime() - this.retentionMs).toISOString();
          this.logger.info({ ...history, createdBefore }, 'delivery history past its retention purged');
        }
        this.passes?.inc({ outcome: 'completed' });
      } catch (error) {
        this.passes?.inc({ outcome: 'failed' });
        // What it had deleted is gone all the same (and counted): the line says so beside the failure.
        this.logger.warn({ err: error, purgedBeforeFailure: deleted }, 'maintenance pass failed');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
