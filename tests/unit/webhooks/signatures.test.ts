/**
 * Webhook signatures (SPEC: Signature (v1)) against vectors computed apart from the service
 * (`openssl dgst -sha256 -hmac`), every header of an attempt, and sealed secrets bound to their subscription.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders, sealSecret, signLegacy, signV1, unsealSecret } from '../../../src/modules/outbox/signing.js';

const BODY = Buffer.from('{"id":"evt_1"}', 'utf8');
const SECRET = 'whsec test ✓ secret';
// printf '%s' '1767225600.{"id":"evt_1"}' | openssl dgst -sha256 -hmac 'whsec test ✓ secret'
const V1_VECTOR = '0195020f96b0af8e1a445572578cf0b167216430c920586defb12534bbf3c797';
const LEGACY_KEY = Buffer.from([...Array(32).keys()]);
// printf '%s' '{"id":"evt_1"}' | openssl dgst -sha256 -mac HMAC -macopt hexkey:000102…1f
const LEGACY_VECTOR = '11c59e1533eddddb4836004e34dadcceb388a3e3476854ae230f3055542ac69f';

describe('signatures', () => {
  it('v1: lower-case hex HMAC-SHA256 of timestamp "." body, keyed with the UTF-8 bytes of the secret', () => {
    expect(signV1(SECRET, '1767225600', BODY)).toBe(V1_VECTOR);
    expect(signV1(SECRET, '1767225601', BODY)).not.toBe(V1_VECTOR);
    expect(signV1(`${SECRET} `, '1767225600', BODY)).not.toBe(V1_VECTOR);
  });

  it('legacy: HMAC-SHA256 of the body alone under the server key', () => {
    expect(signLegacy(LEGACY_KEY, BODY)).toBe(LEGACY_VECTOR);
  });

  const common = {
    eventId: 'evt_1',
    eventType: 'ticket.created',
    deliveryId: 'dlv_1',
    attempt: 3,
    body: BODY,
    legacyKey: LEGACY_KEY,
    now: new Date(1_767_225_600_999),
  };

  it('v1 headers carry the version, the canonical timestamp of now (whole seconds) and its signature', () => {
    expect(deliveryHeaders({ ...common, signingVersion: 'v1', secret: SECRET })).toEqual({
      'content-type': 'application/json',
      'user-agent': 'site-services-webhooks/1',
      'x-svc-event-id': 'evt_1',
      'x-svc-event-type': 'ticket.created',
      'x-svc-delivery-id': 'dlv_1',
      'x-svc-attempt': '3',
      'x-svc-signature-alg': 'hmac-sha256',
      'x-svc-signature-version': 'v1',
      'x-svc-timestamp': '1767225600',
      'x-svc-signature': V1_VECTOR,
    });
    expect(() => deliveryHeaders({ ...common, signingVersion: 'v1' })).toThrow(/secret/);
  });

  it('legacy headers have neither version nor timestamp', () => {
    const headers = deliveryHeaders({ ...common, signingVersion: 'legacy' });
    expect(headers['x-svc-signature']).toBe(LEGACY_VECTOR);
    expect(headers).not.toHaveProperty('x-svc-signature-version');
    expect(headers).not.toHaveProperty('x-svc-timestamp');
  });

  it('seals a secret for its subscription only: another subscription, key or a changed byte opens nothing', () => {
    const key = randomBytes(32);
    const sealed = sealSecret(key, 'whs_a', SECRET);
    expect(sealed).not.toContain(SECRET);
    expect(unsealSecret(key, 'whs_a', sealed)).toBe(SECRET);
    expect(unsealSecret(key, 'whs_b', sealed)).toBeUndefined();
    expect(unsealSecret(randomBytes(32), 'whs_a', sealed)).toBeUndefined();
    const tampered = `${sealed.slice(0, 20)}${sealed[20] === 'A' ? 'B' : 'A'}${sealed.slice(21)}`;
    expect(unsealSecret(key, 'whs_a', tampered)).toBeUndefined();
    expect(sealSecret(key, 'whs_a', SECRET)).not.toBe(sealed);
  });
});
