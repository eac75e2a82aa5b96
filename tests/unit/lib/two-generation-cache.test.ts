/** lib/two-generation-cache.ts: bounded by weight, the old generation dropped whole, a hit kept young. */
import { describe, expect, it } from 'vitest';
import { TwoGenerationCache } from '../../../src/lib/two-generation-cache.js';

describe('TwoGenerationCache', () => {
  it('keeps what was used lately and drops the generation before last', () => {
    const cache = new TwoGenerationCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3); // a, b are the old generation now
    expect(cache.get('a')).toBe(1); // a hit moves a to the young one
    cache.set('d', 4); // young (c, a) full: c, a old, b dropped
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, 3, 4]);
  });

  it('forgets a deleted key in either generation, and counts its weight no more', () => {
    const cache = new TwoGenerationCache<string, string>(4, (value) => value.length);
    cache.set('old', 'xx');
    cache.set('young', 'yyy'); // 5 > 4: old moves to the old generation
    cache.delete('old');
    cache.delete('young');
    expect([cache.get('old'), cache.get('young')]).toEqual([undefined, undefined]);
    // The young generation is empty again: four units fit without dropping anything.
    cache.set('a', 'aa');
    cache.set('b', 'bb');
    expect([cache.get('a'), cache.get('b')]).toEqual(['aa', 'bb']);
  });

  it('does not keep an entry heavier than a generation', () => {
    const cache = new TwoGenerationCache<string, string>(2, (value) => value.length);
    cache.set('big', 'xyz');
    expect(cache.get('big')).toBeUndefined();
  });
});
