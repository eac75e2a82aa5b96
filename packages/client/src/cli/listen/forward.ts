/**
 * One attempt of `svc listen`: POST it to the developer's address exactly as the service would have
 * (the same body bytes and every header, signature included), over http or https, without following
 * redirects, and say what came back in one line.
 */

/**
 * An attempt as the listener's stream sends it: one delivery attempt, exactly as it would be POSTed to a
 * subscription's target. The protocol's own definition: the service's stream sends this type.
 */
export interface StreamAttempt {
  type: 'attempt';
  deliveryId: string;
  attempt: number;
  eventId: string;
  eventType: string;
  /** Every header of the real request (content-type, user-agent and the x-svc-* headers). */
  headers: Record<string, string>;
  /** The request body: the UTF-8 text of the exact bytes signed. */
  body: string;
  /**
   * Whether this is the delivery's last attempt: if it fails, no retry follows and the delivery fails. Absent from
   * a service older than this field.
   */
  lastAttempt?: boolean;
  /**
   * When not the last: if this attempt is retried (any answer but 2xx or a redirect), the next one is due about this
   * many milliseconds after it (the retry schedule's wait, which the service varies by ±20%); null on the last.
   */
  retryInMs?: number | null;
}

/** What is reported back on the stream for one attempt. */
export interface AttemptResult {
  type: 'result';
  deliveryId: string;
  attempt: number;
  statusCode?: number;
  error?: string;
  durationMs: number;
}

export type ForwardFetch = (url: string, init: RequestInit) => Promise<Response>;

/** Forwards one attempt; never throws (a failure is the result's `error`). */
export async function forwardAttempt(
  attempt: StreamAttempt,
  forwardTo: string,
  timeoutMs: number,
  fetchImpl: ForwardFetch = fetch,
): Promise<AttemptResult> {
  const started = performance.now();
  const result = { type: 'result' as const, deliveryId: attempt.deliveryId, attempt: attempt.attempt };
  try {
    const response = await fetchImpl(forwardTo, {
      method: 'POST',
      headers: attempt.headers,
      body: Buffer.from(attempt.body, 'utf8'),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel().catch(() => undefined);
    return { ...result, statusCode: response.status, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { ...result, error: describe(error, timeoutMs), durationMs: Math.round(performance.now() - started) };
  }
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = e?.cause;
  const text = cause?.code ? `${cause.code}: ${cause.message ?? ''}` : (cause?.message ?? e?.message ?? String(error));
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** The status as the line shows it: a redirect says what the service makes of it (it never follows one). */
function statusText(statusCode: number): string {
  return statusCode >= 300 && statusCode < 400
    ? `${statusCode} (a redirect: not followed, the delivery fails)`
    : `${statusCode}`;
}

/** A wait as the line says it: "at once", or about so many seconds, minutes or hours. */
function about(ms: number): string {
  if (ms < 1_000) return 'at once';
  if (ms < 120_000) return `in about ${Math.round(ms / 1_000)} s`;
  if (ms < 7_200_000) return `in about ${Math.round(ms / 60_000)} min`;
  return `in about ${Math.round(ms / 3_600_000)} h`;
}

/**
 * What follows a failed attempt, as the service said in the attempt (its lastAttempt and retryInMs): no retry, or
 * when the next attempt comes. Empty for a 2xx or a redirect (which says so itself), or when the service said nothing.
 */
function followUpText(attempt: StreamAttempt, result: AttemptResult): string {
  const status = result.statusCode;
  if (status !== undefined && status >= 200 && status < 400) return '';
  if (attempt.lastAttempt === true) return '  last attempt: no retry, the delivery failed';
  if (typeof attempt.retryInMs === 'number') return `  retried ${about(attempt.retryInMs)}`;
  return '';
}

/**
 * The line printed for an attempt: time, event type, event id, attempt number, status (or error) and duration, and
 * for a failed one whether it is retried (and when) or was the last.
 */
export function attemptLine(attempt: StreamAttempt, result: AttemptResult, at: Date): string {
  const outcome = result.statusCode !== undefined ? statusText(result.statusCode) : `error (${result.error})`;
  return `${at.toISOString()}  ${attempt.eventType}  ${attempt.eventId}  attempt ${attempt.attempt}  ${outcome}  ${result.durationMs} ms${followUpText(attempt, result)}`;
}
