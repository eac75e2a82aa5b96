/**
 * A list's answer built a chunk of rows at a time (src/http/page-body.ts): the same bytes as the page rendered
 * whole and then cut at PAGE_BYTES, with the rows past the cut never asked for beyond the chunk that holds it.
 */
import { describe, expect, it } from 'vitest';
import { chunkedPageBody, type PageEnd, type RenderedRow } from '../../../src/http/page-body.js';
import { DEFAULT_PAGE_SIZE, PAGE_BYTES } from '../../../src/http/pagination.js';
import { seededRandom } from '../../helpers/seeded-random.js';

interface Row {
  seq: number;
  bytes: number;
  /** Gone since it was listed: its chunk's render leaves it out. */
  gone: boolean;
}

const rowJson = (row: Row) => Buffer.from(JSON.stringify({ seq: row.seq, pad: 'x'.repeat(row.bytes) }));

const end: PageEnd = {
  whole: () => ({ pageSize: 100, nextCursor: 'next' }),
  cut: (lastSeq, omitted) => ({ pageSize: 100, nextCursor: `after-${lastSeq}`, omitted }),
};

/** The page rendered whole, then cut: every row rendered, and taken while their JSON fits (the first always). */
function wholePage(rows: readonly Row[]): Buffer {
  const rendered = rows.filter((row) => !row.gone).map((row) => ({ json: rowJson(row), seq: row.seq }));
  const taken: Buffer[] = [];
  let bytes = 0;
  for (const [at, row] of rendered.entries()) {
    if (taken.length > 0 && bytes + row.json.length > PAGE_BYTES) {
      // The rows left out: this one and every row listed after it, gone or not.
      const omitted = rows.length - rows.findIndex((listed) => listed.seq === row.seq);
      return body(taken, end.cut(rendered[at - 1]!.seq, omitted));
    }
    taken.push(row.json);
    bytes += row.json.length + 1;
  }
  return body(taken, end.whole());
}

const body = (rows: Buffer[], meta: object | undefined) =>
  Buffer.from(`{"data":[${rows.join(',')}]${meta === undefined ? '' : `,"meta":${JSON.stringify(meta)}`}}`);

/** Renders chunks as a route does, noting each chunk asked. */
function renderer() {
  const chunks: number[][] = [];
  const render = async (chunk: readonly Row[]): Promise<(RenderedRow | undefined)[]> => {
    chunks.push(chunk.map((row) => row.seq));
    return chunk.map((row) => (row.gone ? undefined : { json: rowJson(row), seq: row.seq }));
  };
  return { chunks, render };
}

const rowsOf = (sizes: number[], gone: (at: number) => boolean = () => false): Row[] =>
  sizes.map((bytes, at) => ({ seq: at + 1, bytes, gone: gone(at) }));

describe('chunkedPageBody', () => {
  it('answers what the page rendered whole answers, byte for byte, on generated pages', async () => {
    const random = seededRandom(20261128);
    for (let page = 0; page < 400; page++) {
      // Pages of small rows, of rows of some 10 to 200 KB, and of both; some rows gone since they were listed.
      const large = random() < 0.5 ? 200_000 : 20_000;
      const sizes = Array.from({ length: 1 + Math.floor(random() * 100) }, () =>
        random() < 0.3 ? Math.floor(random() * large) : Math.floor(random() * 2_000),
      );
      const rows = rowsOf(sizes, () => random() < 0.05);
      const { chunks, render } = renderer();
      const answer = await chunkedPageBody(rows, render, end);
      expect(answer.equals(wholePage(rows)), `page ${page}`).toBe(true);
      // Each row asked once, in order, from the first on.
      expect(chunks.flat()).toEqual(rows.slice(0, chunks.flat().length).map((row) => row.seq));
    }
  });

  it('asks for no row past the chunk that holds the cut', async () => {
    // 100 rows of 90 KB: eleven fit 1 MiB, the twelfth does not.
    const { chunks, render } = renderer();
    const answer = JSON.parse((await chunkedPageBody(rowsOf(Array(100).fill(90_000)), render, end)).toString());
    expect(answer.data).toHaveLength(11);
    expect(answer.meta).toEqual({ pageSize: 100, nextCursor: 'after-11', omitted: 89 });
    expect(chunks.flat().length).toBe(DEFAULT_PAGE_SIZE);

    // Rows of 60 KB after 25 of 30 KB: the next chunk is what the room left holds at the mean row so far, and one.
    const mixed = renderer();
    const sizes = [...Array(25).fill(30_000), ...Array(75).fill(60_000)];
    const cut = JSON.parse((await chunkedPageBody(rowsOf(sizes), mixed.render, end)).toString());
    expect(cut.data).toHaveLength(25 + 4);
    expect(mixed.chunks.map((chunk) => chunk.length)).toEqual([25, 11]);
  });

  it('renders an ordinary default page in one chunk, and a page of 100 small rows in two', async () => {
    const small = renderer();
    await chunkedPageBody(rowsOf(Array(DEFAULT_PAGE_SIZE).fill(500)), small.render, end);
    expect(small.chunks.map((chunk) => chunk.length)).toEqual([DEFAULT_PAGE_SIZE]);

    const hundred = renderer();
    await chunkedPageBody(rowsOf(Array(100).fill(500)), hundred.render, end);
    expect(hundred.chunks.map((chunk) => chunk.length)).toEqual([DEFAULT_PAGE_SIZE, 100 - DEFAULT_PAGE_SIZE]);
  });

  it('ends a page without meta when its end says none, and an empty page with no rows', async () => {
    const bare: PageEnd = { whole: () => undefined, cut: (_lastSeq, omitted) => ({ omitted }) };
    const { render } = renderer();
    expect((await chunkedPageBody([], render, bare)).toString()).toBe('{"data":[]}');
    const one = await chunkedPageBody(rowsOf([10]), render, bare);
    expect(JSON.parse(one.toString())).toEqual({ data: [{ seq: 1, pad: 'x'.repeat(10) }] });
  });
});
