import { randomBytes, randomInt } from 'node:crypto';
import { pooledRandomBytes } from './random-pool.js';

/** Lower-case Crockford base32: no padding, no look-alike letters, safe in URLs and logs. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

export type IdPrefix = 'tnt' | 'cli' | 'site' | 'visit' | 'msg' | 'whsub' | 'whl' | 'evt' | 'dlv' | 'file';

/** A prefixed opaque identifier with 128 random bits, e.g. `site_5k2x…`. Never a database serial. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base32(pooledRandomBytes(16))}`;
}

const SECRET_BYTES = 32;
/** 256 bits in 5-bit characters. */
const SECRET_CHARACTERS = Math.ceil((SECRET_BYTES * 8) / 5);
const BASE32_CHARACTER = new RegExp(`^[${ALPHABET}]*$`);

/** A random secret of 256 bits, base32-encoded, with a readable prefix. */
export function newSecret(prefix: string): string {
  return `${prefix}_${base32(randomBytes(SECRET_BYTES))}`;
}

/** Whether a value has the shape newSecret(prefix) gives (the prefix, then 52 characters of its alphabet). */
export function hasSecretShape(prefix: string, value: string): boolean {
  const body = value.slice(prefix.length + 1);
  return value.startsWith(`${prefix}_`) && body.length === SECRET_CHARACTERS && BASE32_CHARACTER.test(body);
}

/**
 * Integer record ids (SPEC: site assets are addressed by integer). Random rather than sequential
 * so that they reveal nothing about other tenants' volumes; callers retry on the rare collision.
 */
export function newIntegerId(): number {
  return randomInt(100_000_000, 2_147_483_647);
}
