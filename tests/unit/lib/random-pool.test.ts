import { describe, expect, it } from 'vitest';
import { pooledRandomBytes } from '../../../src/lib/random-pool.js';

describe('pooledRandomBytes', () => {
  it('hands out each pooled byte once, across refills, and keeps what it handed out unchanged', () => {
    const first = pooledRandomBytes(12);
    const kept = Buffer.from(first);
    const handedOut = Array.from({ length: 2_000 }, () => pooledRandomBytes(12).toString('hex'));
    expect(new Set(handedOut).size).toBe(handedOut.length);
    expect(handedOut).not.toContain(kept.toString('hex'));
    expect(first.equals(kept)).toBe(true);
  });

  it('gives the size asked, and refuses more than its pool', () => {
    expect(pooledRandomBytes(1)).toHaveLength(1);
    expect(pooledRandomBytes(4096)).toHaveLength(4096);
    expect(() => pooledRandomBytes(4097)).toThrow(RangeError);
  });
});
