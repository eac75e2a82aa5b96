import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';

describe('newId', () => {
  it('gives prefixed 128-bit ids, all different, also across refills of its entropy buffer', () => {
    const ids = Array.from({ length: 1_000 }, () => newId('site'));
    for (const id of ids) expect(id).toMatch(/^site_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
