/**
 * A list's answer from its rows' JSON, bounded at `PAGE_BYTES`, built a chunk of rows at a time.
 *
 * A row's JSON needs its children (a visit's return-label versions and assets, a message's attachment
 * versions), read for many rows at once. Reading them for the whole page before the cut made a page of 100
 * visits with 99 return-label versions each read 9,900 version rows however few the 1 MiB kept (hostile-tenant
 * probe: 39 ms of the event loop a page, 12 ms ordinarily). So the rows are rendered in
 * chunks, the first one the default page's size (an ordinary default page is one read, as before) and each
 * next one as many rows as the room left holds at the rows' mean size so far, and one more: the row that
 * does not fit must be rendered to be known not to. The answer is the one a whole page rendered at once makes,
 * byte for byte: the rows taken are the same, in the same order, with the same end.
 */
import { DEFAULT_PAGE_SIZE, PAGE_BYTES } from './pagination.js';

/** A row's JSON and its place in the list (`seq`, a cursor's position). */
export interface RenderedRow {
  json: Buffer;
  seq: number;
}

/** What the answer says beside its rows (its `meta`, none when undefined), whole or cut after a row. */
export interface PageEnd {
  /** Every row fitted. */
  whole(): object | undefined;
  /**
   * The rows stopped at `PAGE_BYTES` after the row at `lastSeq`, leaving out `omitted` of the rows given
   * (the one that did not fit and those after it).
   */
  cut(lastSeq: number, omitted: number): object;
}

/**
 * Renders a chunk of rows, reading what they need at once: a row's JSON at the row's place in the chunk,
 * undefined for a row gone since it was listed (left out). The chunks are the rows in order, each asked once.
 */
export type ChunkRenderer<T> = (chunk: readonly T[]) => Promise<readonly (RenderedRow | undefined)[]>;

const DATA_START = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

/**
 * The answer of `rows` rendered a chunk at a time by `render`: the rows while their JSON fits `PAGE_BYTES` (the
 * first whatever its size), ended by `end`. Rows past the cut are not rendered, nor what they need read.
 */
export async function chunkedPageBody<T>(rows: readonly T[], render: ChunkRenderer<T>, end: PageEnd): Promise<Buffer> {
  const json: Buffer[] = [];
  let bytes = 0;
  let lastSeq = 0;
  let at = 0;
  while (at < rows.length) {
    const chunk = rows.slice(at, at + chunkSize(json.length, bytes, rows.length - at));
    const rendered = await render(chunk);
    for (const [index, row] of rendered.entries()) {
      if (row === undefined) continue;
      if (json.length > 0 && bytes + row.json.length > PAGE_BYTES) {
        return listBody(json, end.cut(lastSeq, rows.length - (at + index)));
      }
      json.push(row.json);
      bytes += row.json.length + 1;
      lastSeq = row.seq;
    }
    at += chunk.length;
  }
  return listBody(json, end.whole());
}

/** The next chunk's rows: the default page first, then what the room left holds at the mean row so far, and one. */
function chunkSize(taken: number, bytes: number, left: number): number {
  if (taken === 0) return Math.min(DEFAULT_PAGE_SIZE, left);
  const room = Math.max(PAGE_BYTES - bytes, 0);
  return Math.min(Math.ceil(room / (bytes / taken)) + 1, left);
}

/** An answer in a list's envelope (`{"data":[...],"meta":...}`) from its rows' JSON: one copy of the rows. */
function listBody(rows: readonly Buffer[], meta: object | undefined): Buffer {
  const parts: Buffer[] = [DATA_START];
  rows.forEach((row, at) => {
    if (at > 0) parts.push(COMMA);
    parts.push(row);
  });
  parts.push(Buffer.from(meta === undefined ? ']}' : `],"meta":${JSON.stringify(meta)}}`));
  return Buffer.concat(parts);
}
