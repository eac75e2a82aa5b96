/**
 * One listener's stream, as hub.ts holds it: the socket with who opened it, the frames its client may send
 * (frame-budget.ts), and the attempts sent on it and not yet reported. What goes over the socket is here (an
 * attempt signed afresh, a result matched to an attempt this stream was sent, the liveness ping); which
 * streams this process holds, and the database's view of them, are the hub's.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { WebhookConfig } from '../../config.js';
import type { ClientStandingLookup } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import { scheduledRetryMs } from '../outbox/retry-schedule.js';
import { toEnvelope } from '../outbox/service.js';
import { deliveryHeaders, unsealSecret } from '../outbox/signing.js';
import { FrameBudget } from './frame-budget.js';
import { type AttemptMessage, type AttemptReport, parseResult } from './protocol.js';
import { type ListenerAttemptSource, STREAM_CLOSED } from './repository.js';

export interface Stream {
  id: string;
  listenerId: string;
  /** Who opened the stream: it lasts only while this client's credentials stand. */
  tenantId: string;
  clientId: string;
  socket: WebSocket;
  /** Answered the last ping. */
  alive: boolean;
  /**
   * The payload of the last ping, which its pong echoes (RFC 6455 5.5.3). A pong is also a frame a client may
   * send unasked: counting any pong kept alive a client that never read its stream (so never saw a ping) but
   * sent a pong of its own every few hundred milliseconds, and every attempt sent to it stayed in memory behind
   * the socket it did not read (hostile-tenant probe). A ping comes after whatever was sent before it: to echo
   * its payload, a client must have read all of that.
   */
  ping: Buffer | undefined;
  /**
   * Attempts sent on this stream and not yet reported (deliveryId#attempt), with when they were sent, oldest
   * first. Forgotten once their worker stopped waiting (the attempt timeout): a client that never reported kept
   * every key for as long as its stream lived, and had them all reported "closed" one statement each when it
   * dropped (hostile-tenant probe).
   */
  sent: Map<string, number>;
  /** The frames the client may still send (frame-budget.ts). */
  frames: FrameBudget;
  /**
   * The attempts held back while the client had too much unread (backedUp), oldest first: ids only, loaded and
   * signed when sent. A client that stops reading then costs the ids of the attempts its workers wait on. Not in
   * `sent` until sent: a client reports only on what it was sent.
   */
  held: HeldAttempt[];
  /** Whether the held attempts are being sent (one at a time, so that the bound holds). */
  releasing: boolean;
}

/** An attempt for the stream: which delivery, which attempt, and since when its worker waits (epoch ms). */
export interface HeldAttempt {
  deliveryId: string;
  attempt: number;
  at: number;
}

const key = (deliveryId: string, attempt: number) => `${deliveryId}#${attempt}`;

/**
 * A stream on a freshly upgraded socket. Every frame its client sends is counted against its budget; `onResult`
 * gets each text frame within it, `onClose` the socket's close.
 */
export function openStream(
  socket: WebSocket,
  listenerId: string,
  auth: { tenantId: string; clientId: string },
  on: { result: (stream: Stream, text: string) => void; close: (stream: Stream) => void },
): Stream {
  const frames = new FrameBudget();
  const { tenantId, clientId } = auth;
  const stream: Stream = {
    id: randomUUID(),
    listenerId,
    tenantId,
    clientId,
    socket,
    alive: true,
    ping: undefined,
    sent: new Map(),
    frames,
    held: [],
    releasing: false,
  };
  socket.on('close', () => on.close(stream));
  socket.on('pong', (data) => {
    if (frames.admit(socket) && stream.ping?.equals(data)) stream.alive = true;
  });
  socket.on('ping', () => frames.admit(socket));
  socket.on('message', (data, isBinary) => {
    if (frames.admit(socket) && !isBinary) on.result(stream, data.toString());
  });
  return stream;
}

/**
 * What follows the attempt if it is retried (any answer but 2xx or a redirect): nothing when it is the last of its
 * round's budget, else the next attempt after the schedule's wait, by the worker's own rule (scheduledRetryMs, before
 * its ±20% jitter). Said by the server, which alone knows the budget, the round and the schedule: `svc listen`
 * guessing it would be wrong for any other configuration than the default.
 */
export function followUp(
  attempt: number,
  roundStart: number,
  config: Pick<WebhookConfig, 'maxAttempts' | 'retryScheduleMs'>,
): Pick<AttemptMessage, 'lastAttempt' | 'retryInMs'> {
  const retryInMs = scheduledRetryMs(attempt - roundStart, config) ?? null;
  return { lastAttempt: retryInMs === null, retryInMs };
}

/**
 * The attempt as a subscription's target would get it, signed afresh with the listener's secret, and what follows
 * it if it fails (followUp); undefined when the secret cannot be unsealed.
 */
export function signedAttempt(
  source: ListenerAttemptSource,
  attempt: { deliveryId: string; attempt: number },
  keys: { webhookEncryptionKey: Buffer; legacyWebhookKey: Buffer },
  clock: Clock,
  config: Pick<WebhookConfig, 'maxAttempts' | 'retryScheduleMs'>,
): AttemptMessage | undefined {
  const secret = unsealSecret(keys.webhookEncryptionKey, source.listenerId, source.secretSealed);
  if (secret === undefined) return undefined;
  const text = JSON.stringify(toEnvelope(source.event));
  const headers = deliveryHeaders({
    eventId: source.event.id,
    eventType: source.event.type,
    deliveryId: attempt.deliveryId,
    attempt: attempt.attempt,
    body: Buffer.from(text, 'utf8'),
    signingVersion: 'v1',
    secret,
    legacyKey: keys.legacyWebhookKey,
    now: clock.now(),
  });
  return {
    type: 'attempt',
    deliveryId: attempt.deliveryId,
    attempt: attempt.attempt,
    eventId: source.event.id,
    eventType: source.event.type,
    headers,
    body: text,
    ...followUp(attempt.attempt, source.roundStart, config),
  };
}

/**
 * How much a stream may hold sent and not yet taken by its client (ws's bufferedAmount: what the kernel's socket
 * buffers could not take either) before the attempts for it are held back. A client that stopped reading is cut when
 * it misses a ping (within two ticks), but until then every attempt sent to it piled up in the server's memory
 * behind its socket, however many the workers claimed. A client that reads keeps bufferedAmount near nothing: what it
 * has outstanding at most is the attempts the workers have in flight to it (WEBHOOK_CONCURRENCY per worker, each
 * waiting at most the attempt timeout for its result), each one event's delivery (a few KB), so 1 MiB leaves room
 * for a slow link and a burst; past it a stream holds this and one attempt at most (one larger than the bound is
 * still sent when the client has caught up), a tenant's 5 listeners five times that.
 */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/** Whether the client has left MAX_UNREAD_BYTES unread: what is for it waits (`held`) until it has read. */
export function backedUp(stream: Stream): boolean {
  return stream.socket.bufferedAmount >= MAX_UNREAD_BYTES;
}

/**
 * Holds an attempt back until the client has read (the hub sends it then); the first held is logged. If the stream
 * drops first, its worker is told with those sent (takeClosedReports), and the next stream gets it at once.
 */
export function hold(stream: Stream, attempt: HeldAttempt, logger: Logger): void {
  if (stream.held.length === 0)
    logger.warn(
      { listenerId: stream.listenerId, streamId: stream.id, unreadBytes: stream.socket.bufferedAmount },
      'webhook listener stream backed up: its attempts wait until its client reads',
    );
  stream.held.push(attempt);
}

/**
 * Sends an attempt, remembering it (only its result is taken back) with when its worker started waiting, and owing
 * the client the frame to answer it; `written` once the socket has taken it.
 */
export function sendAttempt(stream: Stream, message: AttemptMessage, at: number, written: () => void): void {
  stream.sent.set(key(message.deliveryId, message.attempt), at);
  stream.frames.owe();
  stream.socket.send(JSON.stringify(message), written);
}

/** The report a client's text frame makes, only for an attempt sent on this stream and not yet reported. */
export function takeReport(stream: Stream, text: string): AttemptReport | undefined {
  const report = parseResult(text);
  if (!report || !stream.sent.delete(key(report.deliveryId, report.attempt))) return undefined;
  return report;
}

/** What the worker waiting for an attempt is told when its stream closed before the attempt was reported. */
export function closedReport(attempt: { deliveryId: string; attempt: number }): AttemptReport {
  return {
    deliveryId: attempt.deliveryId,
    attempt: attempt.attempt,
    statusCode: null,
    durationMs: 0,
    error: STREAM_CLOSED,
  };
}

/**
 * What the workers waiting for this stream's unreported attempts, sent or held back, are told when it drops or is
 * taken over; forgotten, so that a result its client sends after is not taken as a second report.
 */
export function takeClosedReports(stream: Stream): AttemptReport[] {
  const sent = [...stream.sent.keys()].map((sent) => {
    const [deliveryId, attempt] = sent.split('#');
    return closedReport({ deliveryId: deliveryId!, attempt: Number(attempt) });
  });
  const reports = [...sent, ...stream.held.map(closedReport)];
  stream.sent.clear();
  stream.held = [];
  return reports;
}

/** Forgets the attempts whose worker has stopped waiting for a result: a report of one now would go nowhere. */
export function forgetUnreported(stream: Stream, now: number, timeoutMs: number): void {
  stream.held = stream.held.filter((held) => now - held.at <= timeoutMs);
  for (const [sent, at] of stream.sent) {
    if (now - at <= timeoutMs) return;
    stream.sent.delete(sent);
  }
}

/** Pings the stream, or cuts it when it did not answer the previous ping. */
export function pingOrCut(stream: Stream): void {
  if (!stream.alive) return void stream.socket.terminate();
  stream.alive = false;
  stream.ping = randomBytes(8);
  stream.frames.owe();
  stream.socket.ping(stream.ping);
}

/** The scope a stream needs (its route's), checked again while it is open. */
const STREAM_SCOPE = 'webhooks:write';

/** The streams whose client no longer stands: revoked, moved to another tenant, or without the scope. */
export async function revokedStreams(streams: readonly Stream[], lookup: ClientStandingLookup): Promise<Set<Stream>> {
  const revoked = new Set<Stream>();
  for (const stream of streams) {
    const standing = await lookup.lookup(stream.clientId);
    if (!standing.active || standing.tenantId !== stream.tenantId || !standing.tenantScopes.has(STREAM_SCOPE))
      revoked.add(stream);
  }
  return revoked;
}
