/**
 * Client-secret hashes (src/lib/secrets.ts): `sha256$` and the SHA-256 of the secret, compared in constant time;
 * an unknown client is compared with a decoy; a legacy scrypt hash still verifies and answers its replacement.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSecret } from '../../../src/lib/ids.js';
import { hashSecret, verifySecret } from '../../../src/lib/secrets.js';
import { LEGACY_SCRYPT_PAIR } from '../../helpers/legacy-secrets.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url');

describe('hashSecret', () => {
  it('is sha256$ and the base64url SHA-256 of the secret, the same each time', () => {
    const secret = newSecret('secret');
    expect(hashSecret(secret)).toBe(`sha256$${sha256(secret)}`);
    expect(hashSecret(secret)).toMatch(/^sha256\$[A-Za-z0-9_-]{43}$/);
    expect(hashSecret(secret)).toBe(hashSecret(secret));
    expect(hashSecret(newSecret('secret'))).not.toBe(hashSecret(secret));
  });
});

describe('verifySecret', () => {
  const secret = newSecret('secret');
  const stored = hashSecret(secret);

  it('accepts the secret of a sha256 hash, with nothing to rewrite, and refuses any other', async () => {
    expect(await verifySecret(secret, stored)).toEqual({ valid: true });
    expect(await verifySecret(newSecret('secret'), stored)).toEqual({ valid: false });
    expect(await verifySecret(`${secret}x`, stored)).toEqual({ valid: false });
    expect(await verifySecret(secret.slice(0, -1), stored)).toEqual({ valid: false });
  });

  it('refuses every secret when the client is unknown (the decoy), and its own secret too', async () => {
    expect(await verifySecret(secret, undefined)).toEqual({ valid: false });
    expect(await verifySecret('', undefined)).toEqual({ valid: false });
  });

  it('refuses, without throwing, against a stored value in no known shape', async () => {
    const digest = sha256(secret);
    for (const bad of [
      '',
      'sha256$',
      `sha256$${digest.slice(0, 20)}`,
      `sha256$${digest}$x`,
      `SHA256$${digest}`,
      digest,
    ]) {
      expect(await verifySecret(secret, bad), bad).toEqual({ valid: false });
    }
  });

  it('verifies a legacy scrypt hash and answers the sha256 hash to store in its place', async () => {
    expect(await verifySecret(LEGACY_SCRYPT_PAIR.secret, LEGACY_SCRYPT_PAIR.hash)).toEqual({
      valid: true,
      upgradedHash: hashSecret(LEGACY_SCRYPT_PAIR.secret),
    });
    expect(await verifySecret(secret, LEGACY_SCRYPT_PAIR.hash)).toEqual({ valid: false });
  });
});
