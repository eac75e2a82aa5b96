/**
 * A repeatable stream of numbers in [0, 1) for tests that compare two implementations on many generated
 * inputs: the same seed gives the same inputs on every run, so a failure can be replayed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}
