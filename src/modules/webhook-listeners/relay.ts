/**
 * The delivery worker's side of a sandbox webhook listener (issue 18): the listener is a delivery target
 * like a subscription's URL, reached through whichever API process holds its stream. The worker claims
 * the attempt as usual and hands it here; this asks the stream's holder to send it (STREAM_CHANNEL) and
 * waits for the client's report (REPORT_CHANNEL). No report before the attempt's signal aborts (the
 * worker's WEBHOOK_TIMEOUT_MS) is a timeout, as for an HTTP receiver. The server never opens a connection
 * for a listener: the developer's `svc listen` does.
 *
 * Started lazily, at the first listener attempt: a production worker never listens for reports.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { AppDatabase } from '../../db/database.js';
import { listenForNotifications, type NotificationListener } from '../../db/notifications.js';
import type { Clock } from '../../lib/clock.js';
import { type Verdict, verdictForStatus } from '../outbox/attempt-verdict.js';
import * as listeners from './repository.js';
import { type AttemptReport, parseReport, REPORT_CHANNEL, STREAM_CHANNEL, type StreamNotice } from './protocol.js';

export interface ListenerRelayDeps {
  database: AppDatabase;
  clock: Clock;
  logger: Logger;
}

/** What the relay needs of a claimed delivery. */
export interface ListenerAttempt {
  id: string;
  attempt: number;
  subscription: { id: string };
}

const key = (deliveryId: string, attempt: number) => `${deliveryId}#${attempt}`;

export class ListenerRelay {
  private readonly waiting = new Map<string, (report: AttemptReport) => void>();
  private listening: Promise<NotificationListener> | undefined;

  constructor(private readonly deps: ListenerRelayDeps) {}

  /** One attempt of a delivery to a listener; rejects with the signal's reason when it aborts first. */
  async attempt(delivery: ListenerAttempt, signal: AbortSignal): Promise<Verdict> {
    const { db } = this.deps.database;
    const now = this.deps.clock.now();
    const listener = await listeners.listenerState(db, delivery.subscription.id);
    if (!listener || listener.state === 'closed' || listener.alive_until < now) {
      // Past its grace but not yet swept: close it now (its other pending deliveries fail with it).
      if (listener?.state === 'open')
        await db.transaction().execute((tx) => listeners.closeListeners(tx, { expiredAt: now }, now));
      return { outcome: 'failed', statusCode: null, error: listeners.LISTENER_CLOSED };
    }
    if (listener.stream_id === null) return { outcome: 'retry', statusCode: null, error: listeners.NOT_CONNECTED };

    await this.listen();
    const id = key(delivery.id, delivery.attempt);
    const report = new Promise<AttemptReport>((resolve, reject) => {
      const onAbort = () => {
        this.waiting.delete(id);
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(id, (received) => {
        signal.removeEventListener('abort', onAbort);
        this.waiting.delete(id);
        resolve(received);
      });
    });
    const notice: StreamNotice = {
      kind: 'attempt',
      streamId: listener.stream_id,
      deliveryId: delivery.id,
      attempt: delivery.attempt,
    };
    await sql`select pg_notify(${STREAM_CHANNEL}, ${JSON.stringify(notice)})`.execute(db);
    const { statusCode, error } = await report;
    if (statusCode !== null) return verdictForStatus(statusCode);
    return { outcome: 'retry', statusCode: null, error: error ?? 'forwarding failed' };
  }

  private listen(): Promise<NotificationListener> {
    this.listening ??= listenForNotifications(
      this.deps.database,
      REPORT_CHANNEL,
      (payload) => {
        const report = parseReport(payload);
        if (report) this.waiting.get(key(report.deliveryId, report.attempt))?.(report);
      },
      this.deps.logger,
    ).catch((error) => {
      this.listening = undefined;
      throw error;
    });
    return this.listening;
  }

  async close(): Promise<void> {
    const listening = this.listening;
    this.listening = undefined;
    await (await listening?.catch(() => undefined))?.close();
  }
}
