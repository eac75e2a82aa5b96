/**
 * The streams of sandbox webhook listeners held by this API process (issue 18). Any API process may hold
 * any listener's stream; the delivery workers (in any process) reach it through the database:
 *
 * - a worker that claimed an attempt notifies STREAM_CHANNEL naming the stream; the process holding that
 *   stream loads the delivery (only while the attempt is still current), signs it afresh with the
 *   listener's secret, sends it, and relays the client's `result` on REPORT_CHANNEL, only for an attempt
 *   it sent on that stream (a client cannot report on anything else); while its client has too much unread
 *   (stream.ts's MAX_UNREAD_BYTES), the attempts for it are held back, ids only, and sent as it reads;
 * - every tick (at most a second) it pings its streams (one that did not answer the previous tick's ping is
 *   cut), renews their lives (alive_until = now + grace), closes the streams another process took over,
 *   and closes every listener past its grace (any process does this, so a crashed holder's listeners
 *   close too);
 * - a dropped stream starts the grace; a stream that reconnects takes the listener over (the old one ends,
 *   its unreported attempts closed as a drop's), and the deliveries that waited only for a stream are due at
 *   once (on attaching and at every tick); a notice naming a stream gone from this process is answered "not
 *   connected" at once (gone-streams.ts);
 * - every tick it also checks the standing of the client whose token opened each stream (as every request
 *   is checked, at most seconds old) and ends the streams of revoked credentials or of a tenant that no
 *   longer grants webhooks:write.
 *
 * Activated by the first listener created or stream opened in this process; idle otherwise. What goes over
 * one stream's socket (frames, signing, results, pings) is stream.ts.
 */
import { transaction } from '../../db/transaction.js';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { WebhookConfig } from '../../config.js';
import type { AppDatabase } from '../../db/database.js';
import { listenForNotifications, type NotificationListener } from '../../db/notifications.js';
import type { ClientStandingLookup } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import { attemptTimeoutMs } from '../outbox/attempt.js';
import { GoneStreams } from './gone-streams.js';
import * as listeners from './repository.js';
import {
  type AttemptReport,
  CLOSE_CODES,
  parseNotice,
  type ReadyMessage,
  REPORT_CHANNEL,
  STREAM_CHANNEL,
  type StreamNotice,
} from './protocol.js';
import {
  backedUp,
  closedReport,
  forgetUnreported,
  type HeldAttempt,
  hold,
  openStream,
  pingOrCut,
  revokedStreams,
  type Stream,
  sendAttempt,
  signedAttempt,
  takeClosedReports,
  takeReport,
} from './stream.js';

export interface ListenerHubDeps {
  database: AppDatabase;
  clock: Clock;
  logger: Logger;
  config: WebhookConfig;
  keys: { webhookEncryptionKey: Buffer; legacyWebhookKey: Buffer };
  credentialStatus: ClientStandingLookup;
}

const REVOKED = 'the credentials of this stream were revoked or lost webhooks:write';

export class ListenerHub {
  private readonly streams = new Map<string, Stream>();
  private readonly gone = new GoneStreams();
  private notices: Promise<NotificationListener> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private readonly writes = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly deps: ListenerHubDeps) {}

  private get db() {
    return this.deps.database.db;
  }

  private get graceMs(): number {
    return this.deps.config.listenerGraceMs;
  }

  /** How long a worker waits for a result: the attempt timeout as the worker computes it. */
  private get timeoutMs(): number {
    return attemptTimeoutMs(this.deps.config);
  }

  private aliveUntil(): Date {
    return new Date(this.deps.clock.now().getTime() + this.graceMs);
  }

  /** Listens for attempts and starts the ticks (once). */
  async activate(): Promise<void> {
    if (this.stopped) return;
    this.notices ??= listenForNotifications(
      this.deps.database,
      STREAM_CHANNEL,
      (payload) => {
        const notice = parseNotice(payload);
        if (notice) this.track(this.onNotice(notice));
      },
      this.deps.logger,
    );
    await this.notices;
    if (!this.timer && !this.stopped) {
      const tickMs = Math.max(100, Math.min(1_000, Math.floor(this.graceMs / 4)));
      this.timer = setInterval(() => {
        // Nothing awaits a tick: one the database failed is logged and the next tried, never left to end the process.
        this.ticking ??= this.tick()
          .catch((error) => this.deps.logger.warn({ err: error }, 'webhook listener tick failed'))
          .finally(() => {
            this.ticking = undefined;
          });
      }, tickMs);
      this.timer.unref();
    }
  }

  /** Takes a freshly upgraded socket as the listener's stream (the route checked tenant and state). */
  async attach(socket: WebSocket, listenerId: string, auth: { tenantId: string; clientId: string }): Promise<void> {
    let attached = false;
    let dropped = false;
    const stream = openStream(socket, listenerId, auth, {
      result: (from, text) => this.track(this.onResult(from, text)),
      close: (from) => {
        dropped = true;
        if (attached) this.track(this.detach(from));
      },
    });
    await this.activate();
    const now = this.deps.clock.now();
    // Attached before this one's write began, so taken over by it (one attaching alongside is left to the tick).
    const older = [...this.streams.values()].filter((held) => held.listenerId === listenerId);
    if (!(await listeners.attachStream(this.db, auth.tenantId, listenerId, stream.id, this.aliveUntil(), now))) {
      socket.close(CLOSE_CODES.closed, 'listener closed');
      return;
    }
    attached = true;
    this.streams.set(stream.id, stream);
    for (const replaced of older) this.track(this.replace(replaced, stream.id));
    if (dropped) return void this.track(this.detach(stream));
    const ready: ReadyMessage = { type: 'ready', listenerId, timeoutMs: this.timeoutMs, graceMs: this.graceMs };
    socket.send(JSON.stringify(ready));
    await transaction(this.db, undefined, (tx) => listeners.resumeDeliveries(tx, [listenerId], now));
    this.deps.logger.info({ listenerId, streamId: stream.id }, 'webhook listener stream attached');
  }

  /** Tells every process that these listeners closed (their streams end with CLOSE_CODES.closed). */
  async announceClosed(listenerIds: string[]): Promise<void> {
    if (listenerIds.length === 0) return;
    const notice: StreamNotice = { kind: 'closed', listenerIds };
    await sql`select pg_notify(${STREAM_CHANNEL}, ${JSON.stringify(notice)})`.execute(this.db);
  }

  private track(work: Promise<unknown>): void {
    const tracked = work
      .catch((error) => this.deps.logger.warn({ err: error }, 'webhook listener bookkeeping failed'))
      .finally(() => this.writes.delete(tracked));
    this.writes.add(tracked);
  }

  /** The stream dropped or was taken over (`replace`): its workers are told at once (the next stream resumes them). */
  private async detach(stream: Stream, takenOver?: { by: string | undefined }): Promise<void> {
    if (this.streams.get(stream.id) !== stream) return;
    this.forget(stream);
    // Before the reports: told, a worker claims its next delivery, which must not find this stream named.
    await listeners.detachStream(this.db, stream.listenerId, stream.id, this.aliveUntil());
    // The worker waiting for these would otherwise wait for its timeout (taken over too: svc listen's reconnect).
    for (const report of takeClosedReports(stream)) await this.report(report);
    const [listenerId, streamId, takenOverBy] = [stream.listenerId, stream.id, takenOver?.by];
    this.deps.logger.info(
      { listenerId, streamId, takenOverBy },
      `webhook listener stream ${takenOver ? 'taken over' : 'dropped'}`,
    );
  }

  /** Another stream (`by`, when this process's) holds the listener now: ended, its attempts closed as a drop's are. */
  private async replace(stream: Stream, by?: string): Promise<void> {
    stream.socket.close(CLOSE_CODES.replaced, 'another stream holds this listener now');
    await this.detach(stream, { by });
  }

  private async onNotice(notice: StreamNotice): Promise<void> {
    if (notice.kind === 'closed') {
      for (const stream of this.streams.values())
        if (notice.listenerIds.includes(stream.listenerId)) stream.socket.close(CLOSE_CODES.closed, 'listener closed');
      return;
    }
    const stream = this.streams.get(notice.streamId);
    // Gone from this process since the worker read its id: told at once, as if it had found no stream.
    const gone = stream ? undefined : this.gone.reportFor(notice);
    if (!stream) return gone && this.report(gone);
    const attempt = { deliveryId: notice.deliveryId, attempt: notice.attempt, at: this.deps.clock.now().getTime() };
    // Behind those held back, in their order.
    if (stream.held.length > 0) return hold(stream, attempt, this.deps.logger);
    await this.deliver(stream, attempt);
  }

  /** Loads, signs and sends one attempt; holds it back while the client has too much unread (backedUp). */
  private async deliver(stream: Stream, attempt: HeldAttempt): Promise<void> {
    const source = await listeners.loadAttempt(this.db, attempt.deliveryId, attempt.attempt);
    if (!source || source.listenerId !== stream.listenerId) return;
    // Exactly what a subscription's target would get for this attempt, with a fresh timestamp.
    const message = signedAttempt(source, attempt, this.deps.keys, this.deps.clock, this.deps.config);
    if (!message) return;
    // Dropped while the attempt was loaded, so neither held nor sent when the drop told the workers: told now, not at
    // its timeout (the next stream gets it at once).
    if (this.streams.get(stream.id) !== stream) return this.report(closedReport(attempt));
    // Checked when the attempt is ready to go, not before its load: attempts loaded together would all pass.
    if (backedUp(stream)) return hold(stream, attempt, this.deps.logger);
    sendAttempt(stream, message, attempt.at, () => this.track(this.release(stream)));
  }

  /**
   * Sends the attempts held back, oldest first, once the socket has taken what was sent (its write callback) and
   * while the client keeps up; one at a time, so that the bound holds. Those whose worker stopped waiting are
   * dropped by the tick (forgetUnreported): it recorded a timeout, and the delivery is retried.
   */
  private async release(stream: Stream): Promise<void> {
    if (stream.releasing) return;
    stream.releasing = true;
    try {
      while (this.streams.get(stream.id) === stream && !backedUp(stream)) {
        const next = stream.held.shift();
        if (!next) break;
        await this.deliver(stream, next);
      }
    } finally {
      stream.releasing = false;
    }
  }

  private async onResult(stream: Stream, text: string): Promise<void> {
    const report = takeReport(stream, text);
    if (report) await this.report(report);
  }

  private async report(report: AttemptReport): Promise<void> {
    await sql`select pg_notify(${REPORT_CHANNEL}, ${JSON.stringify(report)})`.execute(this.db);
  }

  /** No longer this process's stream to send on. */
  private forget(stream: Stream): void {
    this.streams.delete(stream.id);
    this.gone.add(stream.id, this.deps.clock.now().getTime());
  }

  /** Pings, renews, ends taken-over streams, and closes listeners past their grace. Public for tests. */
  async tick(): Promise<void> {
    const now = this.deps.clock.now();
    // Liveness first, before the tick's database work: a ping is then judged a whole tick after it went out.
    // Pinged at the tick's end, a ping sent late (this tick's statements waited behind others) was judged early
    // (the next tick's did not), and on a loaded machine a client that answered in time was cut.
    for (const stream of this.streams.values()) pingOrCut(stream);
    const expired = await this.db.transaction().execute((tx) => listeners.closeListeners(tx, { expiredAt: now }, now));
    if (expired.length > 0) {
      this.deps.logger.info({ listenerIds: expired }, 'webhook listeners closed: their grace period ran out');
      await this.announceClosed(expired);
    }
    const streams = [...this.streams.values()];
    const ids = streams.map((stream) => stream.id);
    const held = new Set(await listeners.renewStreams(this.db, ids, this.aliveUntil()));
    const holders = streams.filter((stream) => held.has(stream.id));
    const holding = holders.map((stream) => stream.listenerId);
    await transaction(this.db, undefined, (tx) => listeners.resumeDeliveries(tx, holding, now));
    const revoked = await revokedStreams(holders, this.deps.credentialStatus);
    for (const stream of streams) forgetUnreported(stream, now.getTime(), this.timeoutMs);
    this.gone.forgetOlderThan(now.getTime(), this.timeoutMs);
    for (const stream of streams) {
      if (revoked.has(stream)) stream.socket.close(CLOSE_CODES.unauthorized, REVOKED);
      else if (!held.has(stream.id)) await this.replace(stream);
    }
  }

  /** Ends this process's streams (their listeners' grace starts) and stops listening. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    for (const stream of [...this.streams.values()]) {
      stream.socket.close(CLOSE_CODES.goingAway, 'the server is shutting down; reconnect');
      await this.detach(stream).catch(() => undefined);
    }
    while (this.writes.size > 0) await Promise.all([...this.writes]);
    const notices = this.notices;
    this.notices = undefined;
    await (await notices?.catch(() => undefined))?.close();
  }
}
