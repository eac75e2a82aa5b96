/**
 * Periodic housekeeping of one process: purges idempotency keys past their replay window. Safe to run in
 * every process at once (each pass is one idempotent DELETE).
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.js';
import type { Clock } from '../lib/clock.js';

export class Maintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly intervalMs = 10 * 60 * 1000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  async runOnce(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        const purged = await purgeExpiredIdempotencyKeys(this.db, this.clock.now());
        if (purged > 0) this.logger.info({ purged }, 'expired idempotency keys purged');
      } catch (error) {
        this.logger.warn({ err: error }, 'maintenance pass failed');
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
