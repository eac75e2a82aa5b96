/** Small, audited wrappers around node:crypto: client-secret hashing, constant-time comparison, sealing. */
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

/**
 * Client secrets are stored as `sha256$<base64url SHA-256 of the secret>`. They are 256 random bits the service
 * generated (newSecret), not chosen by people: no guess at one is feasible whatever the hash, so a slow KDF would
 * only spend a thread of libuv's pool (shared with file I/O and getaddrinfo) on every token request, answered or
 * not. No pepper: it would tie every stored secret to APP_SECRET, whose rotation must stay cheap (docs/decisions.md).
 */
const SHA256 = 'sha256';

/** Rows written before that hold `scrypt$N$r$p$salt$hash`: verified as they were, then rewritten (verifySecret). */
const LEGACY_SCRYPT = 'scrypt';

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Hashes a client secret for storage: `sha256$hash`, base64url. */
export function hashSecret(secret: string): string {
  return `${SHA256}$${digest(secret).toString('base64url')}`;
}

/** A hash no secret matches, verified against when the client id is unknown, so an unknown id costs what a wrong secret does. */
const DECOY_DIGEST = randomBytes(32);

export interface SecretCheck {
  valid: boolean;
  /** Set when the secret matched a legacy scrypt hash: the hash to store in its place. */
  upgradedHash?: string;
}

/**
 * Checks a secret against its stored hash (undefined: the client id is unknown), comparing in constant time.
 * A legacy scrypt hash costs its scrypt once more, on the thread pool; a match answers the new hash to store.
 */
export async function verifySecret(secret: string, stored: string | undefined): Promise<SecretCheck> {
  const [scheme, ...parts] = stored?.split('$') ?? [];
  if (scheme === LEGACY_SCRYPT && parts.length === 5) {
    const valid = await verifyScrypt(secret, parts as [string, string, string, string, string]);
    return valid ? { valid, upgradedHash: hashSecret(secret) } : { valid };
  }
  const expected = scheme === SHA256 && parts.length === 1 ? Buffer.from(parts[0]!, 'base64url') : undefined;
  const known = expected?.length === 32;
  // An unknown id, or a row in no scheme we know, is compared with the decoy: the same work, never a match.
  const equal = timingSafeEqual(digest(secret), known ? expected : DECOY_DIGEST);
  return { valid: equal && known };
}

async function verifyScrypt(secret: string, [n, r, p, salt, hash]: [string, string, string, string, string]) {
  const expected = Buffer.from(hash, 'base64url');
  if (expected.length === 0) return false;
  const actual = await new Promise<Buffer>((resolve, reject) => {
    scrypt(
      secret,
      Buffer.from(salt, 'base64url'),
      expected.length,
      { N: Number(n), r: Number(r), p: Number(p) },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
  return timingSafeEqual(actual, expected);
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
