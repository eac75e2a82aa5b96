/** Small, audited wrappers around node:crypto: secret hashing, constant-time comparison, sealing. */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto';
import { pooledRandomBytes } from './random-pool.js';

const SCRYPT = { N: 16_384, r: 8, p: 1, keyLength: 32 } as const;

function scryptAsync(secret: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, SCRYPT.keyLength, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** Hashes a client secret for storage: `scrypt$N$r$p$salt$hash`, all base64url. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(secret, salt);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A hash that never matches, verified against when the client id is unknown so timing reveals nothing. */
const DECOY_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${randomBytes(16).toString('base64url')}$${randomBytes(32).toString('base64url')}`;

export async function verifySecret(secret: string, stored: string | undefined): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? DECOY_HASH).split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await new Promise<Buffer>((resolve, reject) => {
    scrypt(
      secret,
      Buffer.from(salt, 'base64url'),
      expected.length,
      { N: Number(n), r: Number(r), p: Number(p) },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
  return timingSafeEqual(actual, expected) && stored !== undefined;
}

/** Compares two strings in time independent of where they differ (and of their lengths). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right);
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hmacSha256Hex(key: Buffer | string, data: Buffer | string): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

/** Derives an independent 32-byte key for one purpose from a master secret (HKDF-SHA256). */
export function deriveKey(master: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(master, 'utf8'), Buffer.alloc(0), `site-services:${purpose}`, 32));
}

/** AES-256-GCM: `iv.ciphertext.tag`, base64url, authenticated with `context` as associated data. */
export function seal(key: Buffer, plaintext: Buffer | string, context: string): string {
  // A fresh random IV per seal (GCM's rule), from the pool: a list page seals its cursor on every request.
  const iv = pooledRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return [iv, body, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
}

/** Opens what `seal` produced; undefined when it was tampered with, truncated or sealed for another context. */
export function unseal(key: Buffer, sealed: string, context: string): Buffer | undefined {
  const parts = sealed.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const [iv, body, tag] = parts.map((part) => Buffer.from(part!, 'base64url')) as [Buffer, Buffer, Buffer];
    if (iv.length !== 12 || tag.length !== 16) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    return undefined;
  }
}
