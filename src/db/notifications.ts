/**
 * LISTEN for a notification channel on either database. A transaction that runs `pg_notify(channel, …)`
 * wakes the listeners when it commits, in this process and in every other one.
 *
 * PostgreSQL: a dedicated connection outside the pool (a pooled one would be handed to other queries),
 * re-established with backoff after it is lost; `onNotify` is also called after every (re)connect, since
 * notifications sent while disconnected are gone (that call has no payload). PGlite: its own listen(),
 * delivered after commit. `onNotify` gets the notification's payload ('' when it had none).
 */
import pg from 'pg';
import type { Logger } from 'pino';
import type { AppDatabase } from './database.js';

export interface NotificationListener {
  close(): Promise<void>;
}

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export async function listenForNotifications(
  database: AppDatabase,
  channel: string,
  onNotify: (payload?: string) => void,
  logger: Logger,
): Promise<NotificationListener> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  if (database.pglite) {
    const unlisten = await database.pglite.listen(channel, (payload) => onNotify(payload));
    return { close: () => unlisten() };
  }
  if (!database.pool) throw new Error('the database has neither a pool nor PGlite');
  const listener = new PostgresListener(database.pool.options, channel, onNotify, logger);
  await listener.connect();
  return listener;
}

class PostgresListener implements NotificationListener {
  private client: pg.Client | undefined;
  private closed = false;
  private delayMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: pg.PoolConfig,
    private readonly channel: string,
    private readonly onNotify: (payload?: string) => void,
    private readonly logger: Logger,
  ) {}

  /** Connects and listens; on failure schedules another try (the caller's poll covers the gap). */
  async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      ...this.options,
      keepAlive: true,
      application_name: `site-services listener ${this.channel} ${process.pid}`,
    });
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.onNotify(message.payload ?? '');
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.delayMs = RECONNECT_MIN_MS;
      this.onNotify();
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== undefined && this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (this.closed || this.timer) return;
    this.logger.warn(
      { err: error, retryInMs: this.delayMs },
      'notification listener lost its connection; reconnecting',
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(this.delayMs * 2, RECONNECT_MAX_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}
