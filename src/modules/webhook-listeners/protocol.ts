/**
 * What travels for a sandbox webhook listener (issue 18), between processes and on its stream.
 *
 * Between processes (PostgreSQL LISTEN/NOTIFY, small JSON payloads): the delivery worker that claimed an
 * attempt tells the stream holders on STREAM_CHANNEL which stream should send it; the process holding
 * that stream loads the delivery, sends it, and answers the client's report on REPORT_CHANNEL, where the
 * waiting worker records it like any attempt's outcome. A lost notification is a timed-out attempt.
 *
 * On the stream (a WebSocket, JSON text frames): the server sends `ready` once connected, then one
 * `attempt` per attempt (the exact body and every header of a real delivery); the client answers each
 * with one `result`.
 */
import type { StreamAttempt } from '../../../packages/client/src/cli/listen/forward.js';

export const STREAM_CHANNEL = 'webhook_listener_streams';
export const REPORT_CHANNEL = 'webhook_listener_reports';

/** To the stream holders: send this attempt (on the named stream), or these listeners closed. */
export type StreamNotice =
  | { kind: 'attempt'; streamId: string; deliveryId: string; attempt: number }
  | { kind: 'closed'; listenerIds: string[] };

/** To the delivery workers: what the receiver behind a listener answered, or why nothing came back. */
export interface AttemptReport {
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** The first message on a stream. */
export interface ReadyMessage {
  type: 'ready';
  listenerId: string;
  /** How long the server waits for each `result` (WEBHOOK_TIMEOUT_MS, bounded by the lease). */
  timeoutMs: number;
  /** How long the listener outlives a dropped stream (WEBHOOK_LISTENER_GRACE). */
  graceMs: number;
}

/** One delivery attempt, as `svc listen` (the client package, which defines it) receives it. */
export type AttemptMessage = StreamAttempt;

/** Close codes of a stream the server ends. */
export const CLOSE_CODES = {
  /** The listener closed (DELETE, or its grace ran out): reconnecting will not help. */
  closed: 4410,
  /** Another stream took the listener over (a newer `svc listen` for the same listener). */
  replaced: 4409,
  /**
   * The credentials that opened the stream were revoked, or its tenant no longer grants webhooks:write: a
   * stream authenticated once must not outlive them (a leaked pair is revoked to stop exactly this).
   */
  unauthorized: 4401,
  /** The server is shutting down: reconnect (another process may serve it). */
  goingAway: 1001,
} as const;

const MAX_ERROR_LENGTH = 300;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isAttemptNumber = (value: unknown): value is number =>
  Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 1_000_000;

/**
 * A client's `result` message as a report, or undefined when it is not one: `statusCode` (100–599) or
 * `error` (text), and `durationMs`.
 */
export function parseResult(text: string): AttemptReport | undefined {
  const message = parseJson(text);
  if (!isObject(message) || message.type !== 'result') return undefined;
  const { deliveryId, attempt, statusCode, durationMs, error } = message;
  if (typeof deliveryId !== 'string' || deliveryId.length > 100 || !isAttemptNumber(attempt)) return undefined;
  const status = Number.isInteger(statusCode) && (statusCode as number) >= 100 && (statusCode as number) <= 599;
  if (!status && typeof error !== 'string') return undefined;
  const duration =
    typeof durationMs === 'number' && Number.isFinite(durationMs) ? Math.max(0, Math.round(durationMs)) : 0;
  return {
    deliveryId,
    attempt,
    statusCode: status ? (statusCode as number) : null,
    durationMs: duration,
    error: status ? null : `forwarding failed: ${recordable((error as string).slice(0, MAX_ERROR_LENGTH))}`,
  };
}

/**
 * The client's error text as it can be stored and shown: it is the tenant's to choose, and a NUL (which
 * PostgreSQL's text cannot hold) failed the write of the attempt's outcome, leaving the delivery claimed
 * until its lease ran out; so did an unpaired surrogate (sent as such, or left by cutting the text), which
 * the attempt log's jsonb refuses. Line breaks and tabs become spaces (the text is one line of a log and a
 * table cell), other control characters and unpaired surrogates U+FFFD.
 */
function recordable(text: string): string {
  return text.replace(/[\t\n\r]/g, ' ').replace(/[\p{Cc}\p{Cs}]/gu, '\uFFFD');
}

export function parseReport(text: string | undefined): AttemptReport | undefined {
  const report = parseJson(text ?? '');
  if (!isObject(report) || typeof report.deliveryId !== 'string' || !isAttemptNumber(report.attempt)) return undefined;
  return report as unknown as AttemptReport;
}

export function parseNotice(text: string | undefined): StreamNotice | undefined {
  const notice = parseJson(text ?? '');
  if (!isObject(notice)) return undefined;
  if (notice.kind === 'attempt' && typeof notice.streamId === 'string' && typeof notice.deliveryId === 'string')
    return isAttemptNumber(notice.attempt) ? (notice as unknown as StreamNotice) : undefined;
  if (notice.kind === 'closed' && Array.isArray(notice.listenerIds)) return notice as unknown as StreamNotice;
  return undefined;
}
