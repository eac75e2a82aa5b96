/**
 * Pagination cursors (src/http/pagination.ts): a sealed position, opaque and unforgeable, that opens only for
 * the list and tenant it was made for; anything else is a 422 naming page[after].
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../src/http/pagination.js';
import { Problem } from '../../../src/http/problem.js';

const key = randomBytes(32);
const codec = new CursorCodec(key);

/** The cursor with one character of its ciphertext replaced by another. */
function changed(cursor: string): string {
  const at = cursor.indexOf('.') + 1;
  return `${cursor.slice(0, at)}${cursor[at] === 'A' ? 'B' : 'A'}${cursor.slice(at + 1)}`;
}

function refusal(decode: () => number): Problem {
  try {
    decode();
  } catch (error) {
    expect(error).toBeInstanceOf(Problem);
    return error as Problem;
  }
  throw new Error('the cursor was accepted');
}

describe('cursor sealing', () => {
  it('opens to the position it sealed, for the same list and tenant', () => {
    const position = 918_273_645;
    const cursor = codec.encode('sites', 'ten_a', position);
    expect(codec.decode('sites', 'ten_a', cursor)).toBe(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    // Sealed, not encoded: neither the number nor its base64url spelling shows (a short number could appear
    // in random ciphertext by chance, a nine-digit one practically never).
    expect(cursor).not.toContain(String(position));
    expect(cursor).not.toContain(Buffer.from(String(position)).toString('base64url').slice(0, 8));
  });

  it('answers the same position the same sealed cursor for a while; another codec (a restart) seals it anew', () => {
    const cursor = codec.encode('sites', 'ten_a', 41);
    expect(codec.encode('sites', 'ten_a', 41)).toBe(cursor);
    expect(codec.encode('sites', 'ten_b', 41)).not.toBe(cursor);
    expect(codec.encode('site-visits', 'ten_a', 41)).not.toBe(cursor);
    const restarted = new CursorCodec(key);
    expect(restarted.encode('sites', 'ten_a', 41)).not.toBe(cursor);
    expect(restarted.decode('sites', 'ten_a', cursor)).toBe(41);
  });

  it('keeps a bounded number of sealed cursors, each still opening to its position', () => {
    const cursors = Array.from({ length: 25_000 }, (_, position) => codec.encode('sites', 'ten_c', position));
    expect(new Set(cursors).size).toBe(cursors.length);
    for (const position of [0, 12_345, 24_999])
      expect(codec.decode('sites', 'ten_c', cursors[position]!)).toBe(position);
  });

  it.each([
    ['another list', (cursor: string) => codec.decode('site-visits', 'ten_a', cursor)],
    ['another tenant', (cursor: string) => codec.decode('sites', 'ten_b', cursor)],
    ['another key', (cursor: string) => new CursorCodec(randomBytes(32)).decode('sites', 'ten_a', cursor)],
    ['a changed byte', (cursor: string) => codec.decode('sites', 'ten_a', changed(cursor))],
    [
      'a truncated cursor',
      (cursor: string) => codec.decode('sites', 'ten_a', cursor.slice(0, cursor.lastIndexOf('.'))),
    ],
    ['garbage', () => codec.decode('sites', 'ten_a', 'not-a-cursor')],
  ])('refuses %s with 422 naming page[after]', (_, decode) => {
    const problem = refusal(() => decode(codec.encode('sites', 'ten_a', 7)));
    expect(problem.status).toBe(422);
    expect(Object.keys(problem.errors ?? {})).toEqual(['page[after]']);
  });

  it('cuts a page from size + 1 rows: a cursor only when more rows exist', () => {
    const rows = [{ seq: 1 }, { seq: 2 }, { seq: 3 }];
    const full = codec.page('sites', 'ten_a', rows, 2, (row) => row.seq);
    expect(full.items).toEqual([{ seq: 1 }, { seq: 2 }]);
    expect(codec.decode('sites', 'ten_a', full.nextCursor!)).toBe(2);
    expect(codec.page('sites', 'ten_a', rows, 3, (row) => row.seq).nextCursor).toBeUndefined();
  });
});
