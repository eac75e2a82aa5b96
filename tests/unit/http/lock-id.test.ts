/**
 * An Idempotency-Key's advisory lock id (src/http/keyed-create.ts): the first 8 bytes of a SHA-256 as a
 * signed 64-bit integer. Processes of two releases running side by side must lock the same id for the same
 * key, so the values are pinned (computed with a Buffer's readBigInt64BE, as the first release did).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lockId } from '../../../src/http/keyed-create.js';

const byBuffer = (tenantId: string, resourceType: string, key: string) =>
  createHash('sha256').update(`${tenantId}\u0000${resourceType}\u0000${key}`).digest().readBigInt64BE(0).toString();

describe('lockId', () => {
  it('is the same signed 64-bit id as always, negative ones included', () => {
    expect(lockId('tnt_1', 'sites', 'key-1')).toBe('-1897474556593825048');
    expect(lockId('tnt_1', 'site-visits', 'ä-key')).toBe('889274024626417205');
    expect(lockId('t', 'm', 'x')).toBe('2960878391796904065');
  });

  it('agrees with the first 8 bytes read from the digest for any key', () => {
    for (let at = 0; at < 500; at++) {
      const key = `key-${at}-${'x'.repeat(at % 7)}`;
      expect(lockId('tnt_2', 'messages', key)).toBe(byBuffer('tnt_2', 'messages', key));
    }
  });
});
