/**
 * Verification of a webhook delivery, exactly as the service signs it (each event's delivery headers in
 * the API reference): the pinned version `v1` and algorithm `hmac-sha256`, a signing timestamp within the
 * tolerance of the receiver's clock in either direction, the digest (lower-case hex HMAC-SHA256 keyed with
 * the secret's UTF-8 bytes over `timestamp + "." + raw body`) compared in constant time, and only then the
 * JSON parsed. There is no legacy fallback: a legacy-signed delivery fails (upgrade the subscription to v1).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './types.js';

/** Node's IncomingHttpHeaders (lower-case names), a fetch Headers, or a plain record. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  headers: WebhookHeaders;
  /**
   * The body exactly as received (a Buffer, the ArrayBuffer of a fetch Request's `arrayBuffer()`, or text):
   * never a parsed or re-serialised object. Behind a body parser (express.json()), take the raw bytes instead
   * (express.raw({ type: 'application/json' })).
   */
  rawBody: Uint8Array | ArrayBuffer | string;
  /**
   * The subscription's secret, used as given; several during a rotation (any one may match). Each is text of
   * at least 16 characters (a subscription's secret is never shorter).
   */
  secret: string | readonly string[];
  /** The receiver's clock (default: now): a valid Date or finite milliseconds since the epoch. */
  now?: Date | number;
  /** Allowed distance of the signing timestamp from `now`, both ways (default 300): finite, 0 or more. */
  toleranceSeconds?: number;
}

export type VerificationFailure = 'version' | 'algorithm' | 'timestamp' | 'stale' | 'signature' | 'body';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const direct = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  // A header given twice is ambiguous: refuse rather than pick one.
  return typeof direct === 'string' ? direct : undefined;
}

/**
 * The receiver's clock in milliseconds. A NaN clock or tolerance would make the freshness comparison false
 * and accept a replay of any age, so an invalid one is the caller's mistake, thrown as a RangeError (not a
 * WebhookVerificationError: no delivery can pass, whatever it carries).
 */
function checkedClock(now: VerifyWebhookInput['now'], toleranceSeconds: unknown): number {
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError(
      `verifyWebhook: toleranceSeconds must be a finite number of seconds, 0 or more (default 300), got ${String(toleranceSeconds)}`,
    );
  }
  const nowMs = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now;
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) {
    throw new RangeError(
      `verifyWebhook: now must be a valid Date or finite milliseconds since the epoch, got ${String(now)}`,
    );
  }
  return nowMs;
}

/** The shortest secret the service accepts for a subscription, in Unicode code points as it counts them. */
const MIN_SECRET_LENGTH = 16;

/**
 * The secrets to try. An empty or short secret is the caller's mistake (an unset variable read as `''`, a
 * placeholder), not a delivery's: under the empty key anyone can compute a matching signature, so it would
 * accept forgeries. It throws a RangeError, as an invalid clock does. An empty list matches nothing.
 */
function checkedSecrets(secret: unknown): readonly string[] {
  const secrets: unknown[] = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : [secret];
  for (const candidate of secrets) {
    if (typeof candidate !== 'string' || Array.from(candidate).length < MIN_SECRET_LENGTH) {
      throw new RangeError(
        `verifyWebhook: every secret must be text of at least ${MIN_SECRET_LENGTH} characters (the subscription's secret), got ${
          typeof candidate === 'string' ? `${Array.from(candidate).length} characters` : typeof candidate
        }`,
      );
    }
  }
  return secrets as string[];
}

/**
 * The body's bytes. Anything else is the caller's mistake, thrown as a TypeError before any check: most often
 * a body parser ran first (express.json() leaves an object, or `{}` for another content type, and consumes
 * the bytes), and no re-serialisation of the object is guaranteed to give back the bytes that were signed.
 */
function bodyBytes(rawBody: unknown): Uint8Array {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  throw new TypeError(
    `verifyWebhook: rawBody must be the request body exactly as received (a Buffer, Uint8Array, ArrayBuffer or string), got ${
      rawBody === null ? 'null' : typeof rawBody
    }. ` +
      'Was the body parsed before verification (express.json(), a framework body parser)? Read the raw bytes ' +
      "instead, e.g. express.raw({ type: 'application/json' }) on the webhook route: verifyWebhook returns the " +
      'parsed event.',
  );
}

/**
 * Why a delivery without `x-svc-signature-version: v1` is refused, by what it has: no signature header at all
 * (not a delivery, or a proxy that dropped the x-svc-* headers), a signature without a version (a legacy
 * subscription's delivery), or another version.
 */
function versionRefusal(headers: WebhookHeaders, version: string | undefined): string {
  if (version !== undefined) return `x-svc-signature-version is ${JSON.stringify(version)}, not v1`;
  if (header(headers, 'x-svc-signature') === undefined)
    return (
      'no x-svc-signature-version or x-svc-signature header: not a webhook delivery, or something in front of this ' +
      'receiver (a proxy, a framework) removed the x-svc-* headers; pass them through'
    );
  return (
    'no x-svc-signature-version header: a legacy subscription signs without it (and without a timestamp); ' +
    'have the subscription moved to v1 (signingVersion v1 with a secret of yours)'
  );
}

/**
 * Returns the verified event, or throws WebhookVerificationError saying which check failed. Throws a
 * RangeError, before looking at the delivery, when `now`, `toleranceSeconds` or a secret is invalid, and a
 * TypeError when `rawBody` is not the body's bytes or text (a parsed object).
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookEvent {
  const { headers, toleranceSeconds = 300 } = input;
  const nowMs = checkedClock(input.now, toleranceSeconds);
  const secrets = checkedSecrets(input.secret);
  const body = bodyBytes(input.rawBody);
  const version = header(headers, 'x-svc-signature-version');
  if (version !== 'v1') throw new WebhookVerificationError('version', versionRefusal(headers, version));
  if (header(headers, 'x-svc-signature-alg') !== 'hmac-sha256')
    throw new WebhookVerificationError('algorithm', 'x-svc-signature-alg is not hmac-sha256');
  const timestamp = header(headers, 'x-svc-timestamp');
  if (timestamp === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(timestamp)) {
    throw new WebhookVerificationError('timestamp', 'x-svc-timestamp is not canonical decimal Unix seconds');
  }
  // Written so that anything not a number (NaN) fails: fresh only when the distance is provably within.
  const offsetSeconds = Number(timestamp) - nowMs / 1000;
  if (!(Math.abs(offsetSeconds) <= toleranceSeconds)) {
    const distance = `${Math.round(Math.abs(offsetSeconds))} seconds ${offsetSeconds < 0 ? 'behind' : 'ahead of'}`;
    throw new WebhookVerificationError(
      'stale',
      `x-svc-timestamp is ${distance} this receiver's clock (at most ${toleranceSeconds} allowed): a replayed or ` +
        "long-held delivery, or this machine's clock is wrong (check it is synchronised, e.g. NTP)",
    );
  }
  const signature = header(headers, 'x-svc-signature');
  if (signature === undefined || !/^[0-9a-f]{64}$/.test(signature))
    throw new WebhookVerificationError('signature', 'x-svc-signature is not a lower-case hex SHA-256 digest');
  const given = Buffer.from(signature, 'hex');
  // Every secret is tried (no early exit), so the time taken does not say which one matched.
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(`${timestamp}.`, 'utf8')
      .update(body)
      .digest();
    matched = timingSafeEqual(expected, given) || matched;
  }
  if (!matched)
    throw new WebhookVerificationError(
      'signature',
      'x-svc-signature does not match: the secret is not the one this delivery was signed with (a subscription ' +
        'signs with its own secret; svc listen with the one its Ready line printed, kept for every run until ' +
        '--new-secret), or ' +
        'the body was changed before verification (parsed and re-serialised, re-encoded, trimmed)',
    );
  try {
    return JSON.parse(Buffer.from(body).toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('body', 'the signed body is not JSON');
  }
}
