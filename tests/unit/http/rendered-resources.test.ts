/**
 * List pages rendered once per version (src/http/rendered-resources.ts): a page reads its rows' ids and
 * versions, and only the rows not rendered at that version are loaded and serialised.
 */
import { describe, expect, it } from 'vitest';
import { type ResourceObject, resourceObject } from '../../../src/http/envelope.js';
import { type ListedVersion, RenderedResources } from '../../../src/http/rendered-resources.js';

type Note = ResourceObject<{ text: string }>;

/** A tenant's rows as the database holds them now, and the ids each load was asked for. */
function store(rows: Record<string, { version: number; text: string }>) {
  const loads: string[][] = [];
  return {
    rows,
    loads,
    load: async (ids: string[]): Promise<Note[]> => {
      loads.push(ids);
      return ids.flatMap((id) => {
        const row = rows[id];
        return row ? [resourceObject('notes', id, { text: row.text }, row.version)] : [];
      });
    },
  };
}

const listed = (...rows: [id: string, version: number][]): ListedVersion[] =>
  rows.map(([id, version], seq) => ({ id, version, seq }));
const serialize = (note: Note) => JSON.stringify(note);
const texts = (page: Buffer[]) => page.map((json) => (JSON.parse(json.toString('utf8')) as Note).attributes.text);

describe('RenderedResources', () => {
  it('loads and renders the rows it has not rendered, in the page order, and none of them again', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 1, text: 'A' }, b: { version: 3, text: 'B' } });
    const page = listed(['b', 3], ['a', 1]);

    expect(texts(await rendered.page('notes', 'ten_1', page, db.load, serialize))).toEqual(['B', 'A']);
    expect(texts(await rendered.page('notes', 'ten_1', page, db.load, serialize))).toEqual(['B', 'A']);
    expect(db.loads).toEqual([['b', 'a']]);
  });

  it('renders a new version again, and never answers a version with the JSON of another', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 1, text: 'first' } });
    await rendered.page('notes', 'ten_1', listed(['a', 1]), db.load, serialize);

    db.rows.a = { version: 2, text: 'second' };
    expect(texts(await rendered.page('notes', 'ten_1', listed(['a', 2]), db.load, serialize))).toEqual(['second']);
    expect(db.loads).toEqual([['a'], ['a']]);
  });

  it('keeps what it rendered to the tenant and the kind it rendered it for', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 1, text: 'A' } });
    await rendered.page('notes', 'ten_1', listed(['a', 1]), db.load, serialize);
    await rendered.page('notes', 'ten_2', listed(['a', 1]), db.load, serialize);
    await rendered.page('memos', 'ten_1', listed(['a', 1]), db.load, serialize);
    expect(db.loads).toHaveLength(3);
  });

  it('answers a row changed since it was listed at its newer version, and leaves out a row gone since', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 5, text: 'changed' } });
    const page = await rendered.page('notes', 'ten_1', listed(['a', 4], ['gone', 1]), db.load, serialize);
    expect(texts(page)).toEqual(['changed']);
  });

  it('with a capacity of 0 keeps nothing: every page loads every row', async () => {
    const rendered = new RenderedResources(0);
    const db = store({ a: { version: 1, text: 'A' } });
    await rendered.page('notes', 'ten_1', listed(['a', 1]), db.load, serialize);
    await rendered.page('notes', 'ten_1', listed(['a', 1]), db.load, serialize);
    expect(db.loads).toEqual([['a'], ['a']]);
  });

  it('keeps at most its capacity: what was not asked for lately is rendered again', async () => {
    const rows = Object.fromEntries(
      Array.from({ length: 40 }, (_, at) => [`n${at}`, { version: 1, text: 'x'.repeat(80) }]),
    );
    const db = store(rows);
    const rendered = new RenderedResources(4 * 1024);
    for (const id of Object.keys(rows)) await rendered.page('notes', 'ten_1', listed([id, 1]), db.load, serialize);
    // About 140 bytes each: the capacity holds the last twenty or so, not the first.
    await rendered.page('notes', 'ten_1', listed(['n39', 1]), db.load, serialize);
    await rendered.page('notes', 'ten_1', listed(['n0', 1]), db.load, serialize);
    expect(db.loads.slice(40)).toEqual([['n0']]);
  });
});
