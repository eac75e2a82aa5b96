/**
 * Resources rendered once per version (src/http/rendered-resources.ts): a page reads its rows' ids and
 * versions, and only the rows not rendered at that version are loaded and serialised; the same page with
 * the same listing is the answer sent before; a GET by id of a resource rendered before reads its version.
 */
import { describe, expect, it } from 'vitest';
import { type ResourceObject, resourceObject } from '../../../src/http/envelope.js';
import { parseListing } from '../../../src/db/listing.js';
import type { ListingPage } from '../../../src/http/pagination.js';
import { RenderedResources } from '../../../src/http/rendered-resources.js';

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

/** A page of `key` listing these rows (and, past `pageSize`, the row that makes a next page). */
const listed = (key: string, rows: [id: string, version: number][], pageSize = 100): ListingPage => {
  const listing = rows.map(([id, version], seq) => `${id} ${version} ${seq}`).join(' ');
  return {
    key,
    listing,
    pageSize,
    read: () => {
      const all = parseListing(listing);
      return { items: all.slice(0, pageSize), nextCursor: all.length > pageSize ? 'next' : undefined };
    },
    cursorAfter: (position) => `after-${position}`,
  };
};
const serialize = (note: Note) => JSON.stringify(note);
const bodyOf = (body: Buffer) => JSON.parse(body.toString('utf8')) as { data: Note[]; meta: unknown };
const texts = (body: Buffer) => bodyOf(body).data.map((note) => note.attributes.text);

describe('RenderedResources', () => {
  it('loads and renders the rows it has not rendered, in the page order, and none of them again', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 1, text: 'A' }, b: { version: 3, text: 'B' } });

    const first = await rendered.list(
      'notes',
      'ten_1',
      listed('q1', [
        ['b', 3],
        ['a', 1],
      ]),
      db.load,
      serialize,
    );
    // Another page (another query) listing the same rows at the same versions renders nothing again.
    const other = await rendered.list(
      'notes',
      'ten_1',
      listed('q2', [
        ['a', 1],
        ['b', 3],
      ]),
      db.load,
      serialize,
    );
    expect(texts(first)).toEqual(['B', 'A']);
    expect(texts(other)).toEqual(['A', 'B']);
    expect(db.loads).toEqual([['b', 'a']]);
  });

  it('answers the same page with the same listing with the answer it sent, and a changed listing anew', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 1, text: 'A' }, b: { version: 1, text: 'B' } });
    const first = await rendered.list('notes', 'ten_1', listed('q', [['a', 1]], 1), db.load, serialize);
    const again = await rendered.list('notes', 'ten_1', listed('q', [['a', 1]], 1), db.load, serialize);
    expect(again).toBe(first);
    expect(bodyOf(first).meta).toEqual({ pageSize: 1 });

    // A row after the page's last: the same rows, and now a next page.
    const more = await rendered.list(
      'notes',
      'ten_1',
      listed(
        'q',
        [
          ['a', 1],
          ['b', 1],
        ],
        1,
      ),
      db.load,
      serialize,
    );
    expect(texts(more)).toEqual(['A']);
    expect(bodyOf(more).meta).toEqual({ pageSize: 1, nextCursor: 'next' });
    expect(db.loads).toEqual([['a']]);
  });

  it('renders a new version again, and never answers a version with the JSON of another', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 1, text: 'first' } });
    await rendered.list('notes', 'ten_1', listed('q', [['a', 1]]), db.load, serialize);

    db.rows.a = { version: 2, text: 'second' };
    expect(texts(await rendered.list('notes', 'ten_1', listed('q', [['a', 2]]), db.load, serialize))).toEqual([
      'second',
    ]);
    expect(db.loads).toEqual([['a'], ['a']]);
  });

  it('keeps what it rendered to the tenant and the kind it rendered it for', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 1, text: 'A' } });
    await rendered.list('notes', 'ten_1', listed('notes|ten_1', [['a', 1]]), db.load, serialize);
    await rendered.list('notes', 'ten_2', listed('notes|ten_2', [['a', 1]]), db.load, serialize);
    await rendered.list('memos', 'ten_1', listed('memos|ten_1', [['a', 1]]), db.load, serialize);
    expect(db.loads).toHaveLength(3);
  });

  it('answers a row changed since it was listed at its newer version, leaves out a row gone since, and keeps no such page', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = store({ a: { version: 5, text: 'changed' } });
    const page = listed('q', [
      ['a', 4],
      ['gone', 1],
    ]);
    expect(texts(await rendered.list('notes', 'ten_1', page, db.load, serialize))).toEqual(['changed']);
    await rendered.list('notes', 'ten_1', page, db.load, serialize);
    expect(db.loads).toEqual([
      ['a', 'gone'],
      ['a', 'gone'],
    ]);
  });

  it('loads the rows of a page cut at PAGE_BYTES a chunk at a time, none past the chunk of the cut', async () => {
    const rendered = new RenderedResources(4 << 20);
    const rows = Array.from({ length: 100 }, (_, at) => [`n${at}`, 1] as [string, number]);
    const db = store(Object.fromEntries(rows.map(([id]) => [id, { version: 1, text: 'x'.repeat(90_000) }])));
    const page = await rendered.list('notes', 'ten_1', listed('big', rows), db.load, serialize);
    // Eleven rows of 90 KB fit 1 MiB; the first chunk (the default page's 25 rows) holds the cut.
    expect(bodyOf(page).data).toHaveLength(11);
    expect(bodyOf(page).meta).toEqual({ pageSize: 100, nextCursor: 'after-10' });
    expect(db.loads).toEqual([rows.slice(0, 25).map(([id]) => id)]);
    // The same listing is the same answer, kept whole: the rows never loaded do not matter to it.
    expect(await rendered.list('notes', 'ten_1', listed('big', rows), db.load, serialize)).toBe(page);
  });

  it('with a capacity of 0 keeps nothing: every page loads every row', async () => {
    const rendered = new RenderedResources(0);
    const db = store({ a: { version: 1, text: 'A' } });
    await rendered.list('notes', 'ten_1', listed('q', [['a', 1]]), db.load, serialize);
    await rendered.list('notes', 'ten_1', listed('q', [['a', 1]]), db.load, serialize);
    expect(db.loads).toEqual([['a'], ['a']]);
  });

  it('keeps at most its capacity: what was not asked for lately is rendered again', async () => {
    const rows = Object.fromEntries(
      Array.from({ length: 40 }, (_, at) => [`n${at}`, { version: 1, text: 'x'.repeat(80) }]),
    );
    const db = store(rows);
    const rendered = new RenderedResources(8 * 1024);
    const pageOf = (id: string) => listed(`q-${id}`, [[id, 1]]);
    for (const id of Object.keys(rows)) await rendered.list('notes', 'ten_1', pageOf(id), db.load, serialize);
    // About 140 bytes a row and 200 a page, a quarter of the capacity each per generation: the last ten or
    // so of each are kept, not the first.
    await rendered.list('notes', 'ten_1', pageOf('n39'), db.load, serialize);
    await rendered.list('notes', 'ten_1', pageOf('n0'), db.load, serialize);
    expect(db.loads.slice(40)).toEqual([['n0']]);
  });

  it("weighs a page with its key: pages asked with long filters take the capacity's share, not their JSON's", async () => {
    const db = store({ a: { version: 1, text: 'A' } });
    const rendered = new RenderedResources(40_000);
    // The key carries the query: a filter of 100 characters made every empty page of a new filter weigh
    // 34 bytes while costing some 420 (hostile-tenant probe).
    const pageOf = (at: number) => listed(`notes|ten_1|${'f'.repeat(2_000)}${at}`, [['a', 1]]);
    const first = await rendered.list('notes', 'ten_1', pageOf(0), db.load, serialize);
    expect(await rendered.list('notes', 'ten_1', pageOf(0), db.load, serialize)).toBe(first);
    for (let at = 1; at <= 20; at++) await rendered.list('notes', 'ten_1', pageOf(at), db.load, serialize);
    expect(await rendered.list('notes', 'ten_1', pageOf(0), db.load, serialize)).not.toBe(first);
  });
});

describe('RenderedResources.one (a GET by id)', () => {
  /** The rows, and what a GET of one asked the database: its version, or the resource. */
  function single(rows: Record<string, { version: number; text: string }>) {
    const db = store(rows);
    const asked: string[] = [];
    const get = (rendered: RenderedResources, id: string, tenantId = 'ten_1', kind = 'notes') =>
      rendered.one(
        kind,
        tenantId,
        id,
        async () => {
          asked.push(`version ${id}`);
          const row = rows[id];
          if (!row) throw new Error('not found');
          return row.version;
        },
        async () => {
          asked.push(`load ${id}`);
          const [note] = await db.load([id]);
          if (!note) throw new Error('not found');
          return note;
        },
        serialize,
      );
    return { rows, asked, get };
  }
  const textOf = (json: Buffer) => (JSON.parse(json.toString('utf8')) as Note).attributes.text;

  it('loads a resource it holds no JSON of at once, and answers it again from its version alone', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = single({ a: { version: 2, text: 'A' } });
    const first = await db.get(rendered, 'a');
    const again = await db.get(rendered, 'a');
    expect(again).toBe(first);
    expect(first.version).toBe(2);
    expect(textOf(first.json)).toBe('A');
    expect(db.asked).toEqual(['load a', 'version a']);
  });

  it('renders a changed resource at its new version: its version, then the resource', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = single({ a: { version: 1, text: 'first' } });
    await db.get(rendered, 'a');
    db.rows.a = { version: 2, text: 'second' };
    const changed = await db.get(rendered, 'a');
    expect([changed.version, textOf(changed.json)]).toEqual([2, 'second']);
    expect(db.asked).toEqual(['load a', 'version a', 'load a']);
  });

  it('shares the rows a list rendered, and holds them for their tenant and kind only', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = single({ a: { version: 1, text: 'A' } });
    await rendered.list('notes', 'ten_1', listed('q', [['a', 1]]), store(db.rows).load, serialize);
    await db.get(rendered, 'a');
    await db.get(rendered, 'a', 'ten_2');
    await db.get(rendered, 'a', 'ten_1', 'memos');
    expect(db.asked).toEqual(['version a', 'load a', 'load a']);
  });

  it('answers a resource kept as a change answered it from its version alone', async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = single({ a: { version: 1, text: 'first' } });
    await db.get(rendered, 'a');
    db.rows.a = { version: 2, text: 'patched' };
    const kept = rendered.keep('notes', 'ten_1', resourceObject('notes', 'a', { text: 'patched' }, 2), serialize);
    expect(await db.get(rendered, 'a')).toBe(kept);
    expect(db.asked).toEqual(['load a', 'version a']);
  });

  it("answers what the version's read throws (a resource gone is a 404, not the JSON held)", async () => {
    const rendered = new RenderedResources(1 << 20);
    const db = single({ a: { version: 1, text: 'A' } });
    await db.get(rendered, 'a');
    delete db.rows.a;
    await expect(db.get(rendered, 'a')).rejects.toThrow('not found');
  });

  it('with a capacity of 0 loads the resource every time, and never reads a version alone', async () => {
    const rendered = new RenderedResources(0);
    const db = single({ a: { version: 1, text: 'A' } });
    await db.get(rendered, 'a');
    await db.get(rendered, 'a');
    expect(db.asked).toEqual(['load a', 'load a']);
  });
});
