/** BatchedLookup: lookups of one turn of the event loop become one fetch, each answered by its own row. */
import { describe, expect, it } from 'vitest';
import { BatchedLookup } from '../../../src/db/batched-lookup.js';

interface Row {
  tenant: string;
  id: string;
}

/** A lookup over `rows` that records each fetch's lookups (and can be told to fail, or refuse a value). */
function lookupOver(rows: Row[], options: { fail?: () => boolean; refuses?: string } = {}) {
  const fetches: [string, string][][] = [];
  const lookup = new BatchedLookup<[tenant: string, id: string], Row>(
    (row, tenant, id) => row.tenant === tenant && row.id === id,
    async (lookups) => {
      fetches.push(lookups);
      if (options.fail?.()) throw new Error('database gone');
      if (lookups.some(([, id]) => id === options.refuses))
        throw Object.assign(new Error('invalid byte sequence'), { code: '22021' });
      // Like the site query: every row whose id was asked for, of any tenant in the batch.
      const ids = new Set(lookups.map(([, id]) => id));
      const tenants = new Set(lookups.map(([tenant]) => tenant));
      return rows.filter((row) => ids.has(row.id) && tenants.has(row.tenant));
    },
  );
  return { lookup, fetches };
}

describe('BatchedLookup', () => {
  it('gathers the lookups of one turn into one fetch and answers each with its own row', async () => {
    const { lookup, fetches } = lookupOver([
      { tenant: 'a', id: '1' },
      { tenant: 'b', id: '2' },
    ]);
    const answers = await Promise.all([lookup.find('a', '1'), lookup.find('b', '2'), lookup.find('a', '9')]);
    expect(answers).toEqual([{ tenant: 'a', id: '1' }, { tenant: 'b', id: '2' }, undefined]);
    expect(fetches).toEqual([
      [
        ['a', '1'],
        ['b', '2'],
        ['a', '9'],
      ],
    ]);
  });

  it('never answers a lookup with another tenant’s row read in the same batch', async () => {
    const { lookup } = lookupOver([
      { tenant: 'a', id: '1' },
      { tenant: 'b', id: '2' },
    ]);
    // b asks for a's row while a is in the batch too: the fetch reads it, b still gets nothing.
    const [own, foreign] = await Promise.all([lookup.find('a', '1'), lookup.find('b', '1')]);
    expect(own).toEqual({ tenant: 'a', id: '1' });
    expect(foreign).toBeUndefined();
  });

  it('lookups of a later turn go to a later fetch', async () => {
    const { lookup, fetches } = lookupOver([{ tenant: 'a', id: '1' }]);
    await lookup.find('a', '1');
    await lookup.find('a', '1');
    expect(fetches).toHaveLength(2);
  });

  it('splits a large turn into fetches of at most 64 lookups, each answered with its own row', async () => {
    const rows = Array.from({ length: 150 }, (_, index) => ({ tenant: 'a', id: String(index) }));
    const { lookup, fetches } = lookupOver(rows);
    const answers = await Promise.all(Array.from({ length: 150 }, (_, index) => lookup.find('a', String(index))));
    expect(fetches.map((fetch) => fetch.length)).toEqual([64, 64, 22]);
    expect(answers).toEqual(rows);
  });

  it('a failed fetch rejects the lookups of its batch only', async () => {
    let failing = true;
    const { lookup } = lookupOver([{ tenant: 'a', id: '1' }], { fail: () => failing });
    const failed = Promise.all([lookup.find('a', '1'), lookup.find('a', '2')]);
    await expect(failed).rejects.toThrow('database gone');
    failing = false;
    await expect(lookup.find('a', '1')).resolves.toEqual({ tenant: 'a', id: '1' });
  });

  it('a value the database refuses fails its own lookup only: the rest of the batch is read alone', async () => {
    const { lookup, fetches } = lookupOver([{ tenant: 'a', id: '1' }], { refuses: 'bad' });
    const [good, bad, missing] = await Promise.allSettled([
      lookup.find('a', '1'),
      lookup.find('a', 'bad'),
      lookup.find('a', '2'),
    ]);
    expect(good).toEqual({ status: 'fulfilled', value: { tenant: 'a', id: '1' } });
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: '22021' } });
    expect(missing).toEqual({ status: 'fulfilled', value: undefined });
    expect(fetches.map((fetch) => fetch.length)).toEqual([3, 1, 1, 1]);
  });
});
