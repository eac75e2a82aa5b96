/**
 * Webhook secrets at rest and delivery signatures (SPEC: Signature (v1), Delivery headers).
 *
 * v1: lower-case hex HMAC-SHA256 keyed with the secret's exact UTF-8 bytes over `timestamp + "." + body`.
 * legacy: lower-case hex HMAC-SHA256 of the body under the server-held legacy key, without the version
 * and timestamp headers.
 */
import { createHmac } from 'node:crypto';
import { seal, unseal } from '../../lib/secrets.js';

/** How a target's deliveries are signed: v1 with its own secret, legacy with the server-held key. */
export const SIGNING_VERSIONS = ['legacy', 'v1'] as const;
export type SigningVersion = (typeof SIGNING_VERSIONS)[number];

/** The associated data that binds a sealed secret to its subscription: a copied ciphertext does not open elsewhere. */
function secretContext(subscriptionId: string): string {
  return `webhook-secret:${subscriptionId}`;
}

export function sealSecret(key: Buffer, subscriptionId: string, secret: string): string {
  return seal(key, Buffer.from(secret, 'utf8'), secretContext(subscriptionId));
}

export function unsealSecret(key: Buffer, subscriptionId: string, sealed: string): string | undefined {
  return unseal(key, sealed, secretContext(subscriptionId))?.toString('utf8');
}

export function signV1(secret: string, timestamp: string, body: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`, 'utf8').update(body).digest('hex');
}

export function signLegacy(legacyKey: Buffer, body: Buffer): string {
  return createHmac('sha256', legacyKey).update(body).digest('hex');
}

export interface DeliveryHeaderInput {
  eventId: string;
  eventType: string;
  deliveryId: string;
  attempt: number;
  body: Buffer;
  signingVersion: SigningVersion;
  /** The plain v1 secret (v1 only). */
  secret?: string | undefined;
  legacyKey: Buffer;
  now: Date;
}

/** Every header of one attempt; the v1 timestamp is taken fresh from `now` (canonical decimal Unix seconds). */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'site-services-webhooks/1',
    'x-svc-event-id': input.eventId,
    'x-svc-event-type': input.eventType,
    'x-svc-delivery-id': input.deliveryId,
    'x-svc-attempt': String(input.attempt),
    'x-svc-signature-alg': 'hmac-sha256',
  };
  if (input.signingVersion === 'v1') {
    if (input.secret === undefined) throw new Error('a v1 signature needs the secret');
    const timestamp = String(Math.floor(input.now.getTime() / 1000));
    headers['x-svc-signature-version'] = 'v1';
    headers['x-svc-timestamp'] = timestamp;
    headers['x-svc-signature'] = signV1(input.secret, timestamp, input.body);
  } else {
    headers['x-svc-signature'] = signLegacy(input.legacyKey, input.body);
  }
  return headers;
}
