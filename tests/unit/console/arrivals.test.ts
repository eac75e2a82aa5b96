/**
 * What the console's inbox marks "new" (console/arrivals.js, a browser module without imports, loaded here as it
 * is): the ids listed since the page or its filter was chosen, the first listing the start; by id, so a message
 * placed below one already listed (its create committed later) is new all the same; another filter starts again.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

interface Arrivals {
  key: string;
  listed: Set<string>;
  arrived: Set<string>;
}
let arrivals: (state: Arrivals | undefined, key: string, ids: string[]) => Arrivals;
beforeAll(async () => {
  ({ arrivals } = await import(pathToFileURL(path.resolve('console/arrivals.js')).href));
});

describe("the inbox's arrivals", () => {
  it('takes the first listing as the start: nothing of it new', () => {
    const state = arrivals(undefined, 'all', ['m3', 'm2', 'm1']);
    expect([...state.arrived]).toEqual([]);
    expect(arrivals(state, 'all', ['m3', 'm2', 'm1'])).toBe(state);
  });

  it('marks what a later listing adds, and keeps it marked when it leaves the latest listing', () => {
    let state = arrivals(undefined, 'all', ['m2', 'm1']);
    state = arrivals(state, 'all', ['m3', 'm2', 'm1']);
    expect([...state.arrived]).toEqual(['m3']);
    state = arrivals(state, 'all', ['m4', 'm3']);
    expect([...state.arrived].sort()).toEqual(['m3', 'm4']);
    // Listed again after it was handled and reopened: still the one that arrived, nothing else.
    state = arrivals(state, 'all', ['m4', 'm3', 'm2']);
    expect([...state.arrived].sort()).toEqual(['m3', 'm4']);
  });

  it('marks a message placed below one already listed (committed later)', () => {
    let state = arrivals(undefined, 'all', ['m1']);
    state = arrivals(state, 'all', ['m3', 'm1']);
    state = arrivals(state, 'all', ['m3', 'm2', 'm1']);
    expect([...state.arrived].sort()).toEqual(['m2', 'm3']);
  });

  it('starts again under another filter: its first listing is not new', () => {
    let state = arrivals(undefined, 'unhandled', ['m2']);
    state = arrivals(state, 'unhandled', ['m3', 'm2']);
    state = arrivals(state, 'all', ['m3', 'm2', 'm1']);
    expect(state.key).toBe('all');
    expect([...state.arrived]).toEqual([]);
  });
});
