import { randomBytes } from 'node:crypto';

/**
 * Random bytes from the system's CSPRNG fetched 4 KiB at a time (as Node does for randomUUID): one system
 * call per 4 KiB instead of one per use, which on a virtual machine costs more than the bytes themselves
 * (ids, a list cursor's IV). Each byte is handed out once; a refill replaces the pool rather than
 * overwriting it, so what was handed out stays as it was.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** `size` fresh random bytes (at most 4 KiB), a view into the pool that is never handed out again. */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} pooled random bytes at a time`);
  if (offset + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  offset += size;
  return pool.subarray(offset - size, offset);
}
