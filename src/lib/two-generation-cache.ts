/**
 * A bounded cache that drops what was not used lately, without reordering anything on a hit: two
 * generations, the young taking every new entry and every hit of the old, the old dropped whole when the
 * young has reached its limit. A hit is one or two map lookups (a `Map` delete-and-set per hit, the usual LRU,
 * cost a tenth of a list page's time in a profile).
 */
export class TwoGenerationCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private youngWeight = 0;

  /**
   * @param limit the weight one generation holds at most (the cache holds at most twice that); an entry
   *   heavier than it is not kept
   * @param weigh an entry's weight: 1 to count entries, its size to bound memory (its key's included where
   *   a caller chooses the key)
   */
  constructor(
    private readonly limit: number,
    private readonly weigh: (value: V, key: K) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const young = this.young.get(key);
    if (young !== undefined) return young;
    const old = this.old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  delete(key: K): void {
    const young = this.young.get(key);
    if (young !== undefined) {
      this.young.delete(key);
      this.youngWeight -= this.weigh(young, key);
    }
    this.old.delete(key);
  }

  set(key: K, value: V): void {
    const weight = this.weigh(value, key);
    if (weight > this.limit) return;
    if (this.youngWeight + weight > this.limit) {
      this.old = this.young;
      this.young = new Map();
      this.youngWeight = 0;
    }
    this.young.set(key, value);
    this.youngWeight += weight;
  }
}
