/**
 * Keyset pagination. Lists are ordered by an internal, monotonically increasing position (creation
 * order); a cursor seals that position together with the list's name and the tenant, so a cursor is
 * opaque, cannot be forged, and is refused (422) by another list or another tenant.
 */
import { Type } from 'typebox';
import { seal, unseal } from '../lib/secrets.js';
import { TwoGenerationCache } from '../lib/two-generation-cache.js';
import { type ListedVersion, parseListing } from '../db/listing.js';
import { validationProblem } from './problem.js';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/**
 * The JSON of its rows a page may carry (one row at least, whatever its size): a row can be some 200 KB (a
 * visit's or a message's longest texts and 100 file versions), so 100 of them made a 15 MB answer, held whole
 * in memory until its client read it (hostile-tenant probe). A page that stops here has `meta.nextCursor`.
 */
export const PAGE_BYTES = 1024 * 1024;

export const PageSizeParameter = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE_SIZE,
  default: DEFAULT_PAGE_SIZE,
  description: 'Records per page, 1 to 100 in plain digits (not 1e1, 0x10 or +5); default 25.',
});

export const PageQuery = {
  'page[size]': Type.Optional(PageSizeParameter),
  'page[after]': Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: "The previous page's meta.nextCursor." }),
  ),
};

export interface Page<T> {
  items: T[];
  nextCursor: string | undefined;
}

/** A page as read, and the cursor of a position in its list (for a page cut short at `PAGE_BYTES`). */
export interface ReadPage<T> extends Page<T> {
  pageSize: number;
  cursorAfter(position: number): string;
}

export class CursorCodec {
  /** Cursors sealed lately (10,000 to 20,000), so that the same page asked again is not sealed again. */
  private readonly sealed = new TwoGenerationCache<string, string>(10_000);

  constructor(private readonly key: Buffer) {}

  /**
   * The cursor of a position in a tenant's list. The same position is answered the same cursor for a while:
   * handing out one sealed text again reveals nothing its holder did not know (the same page was asked) and
   * keeps a list read by many clients from creating a cipher per page.
   */
  encode(list: string, tenantId: string, position: number): string {
    const key = `${list}|${tenantId}|${position}`;
    const known = this.sealed.get(key);
    if (known !== undefined) return known;
    const cursor = seal(this.key, String(position), `${list}|${tenantId}`);
    this.sealed.set(key, cursor);
    return cursor;
  }

  /** The position after which the next page starts; 422 when the cursor is not one of this list's. */
  decode(list: string, tenantId: string, cursor: string): number {
    const opened = unseal(this.key, cursor, `${list}|${tenantId}`)?.toString('utf8');
    const position = opened === undefined ? NaN : Number(opened);
    if (!Number.isSafeInteger(position) || position < 0) {
      throw validationProblem({
        // A cursor passed unchanged but under other filters (a visit's messages, then the list without
        // siteVisitId) is refused too: say so, or the integrator who did pass it unchanged is left stuck.
        'page[after]': [
          "is not a cursor of this list: pass the previous page's meta.nextCursor unchanged, with the filters " +
            'that page was asked with',
        ],
      });
    }
    return position;
  }

  /**
   * Cuts a page from rows fetched with `limit = size + 1`: the extra row only proves that more exist.
   */
  page<T>(list: string, tenantId: string, rows: T[], size: number, positionOf: (row: T) => number): Page<T> {
    const items = rows.slice(0, size);
    const last = items[items.length - 1];
    return {
      items,
      nextCursor: rows.length > size && last !== undefined ? this.encode(list, tenantId, positionOf(last)) : undefined,
    };
  }
}

/**
 * The name a list's cursors are sealed with: the list's, or with its filter, the filtered list's. A cursor is a
 * position in all the tenant's rows, so one of another filter (or of none) would page this list from wherever
 * that list was, leaving this one's rows before it out without a word; each filtered list refuses the others'
 * cursors instead (422 on page[after]).
 */
export function filteredListName(list: string, filter?: { name: string; value: string }): string {
  return filter === undefined ? list : `${list}?${filter.name}=${encodeURIComponent(filter.value)}`;
}

export function listMeta(pageSize: number, nextCursor: string | undefined) {
  return nextCursor === undefined ? { pageSize } : { pageSize, nextCursor };
}

export interface PageParameters {
  'page[size]'?: number;
  'page[after]'?: string;
}

/** The page asked: its size, and the position it starts after (`page[after]` decoded: 422 when not this list's). */
function pageAsked(cursors: CursorCodec, list: string, tenantId: string, query: PageParameters) {
  const pageSize = query['page[size]'] ?? DEFAULT_PAGE_SIZE;
  const after = query['page[after]'] === undefined ? undefined : cursors.decode(list, tenantId, query['page[after]']);
  return { pageSize, after };
}

/**
 * Reads one page of a list ordered by `seq`: decodes `page[after]` (422 when it is not this list's),
 * fetches `size + 1` rows after it, and cuts the page.
 */
export async function readPage<T extends { seq: number }>(
  cursors: CursorCodec,
  list: string,
  tenantId: string,
  query: PageParameters,
  fetch: (afterSeq: number | undefined, limit: number) => Promise<T[]>,
): Promise<ReadPage<T>> {
  const { pageSize, after } = pageAsked(cursors, list, tenantId, query);
  const rows = await fetch(after, pageSize + 1);
  return {
    ...cursors.page(list, tenantId, rows, pageSize, (row) => row.seq),
    pageSize,
    cursorAfter: (position) => cursors.encode(list, tenantId, position),
  };
}

/**
 * A page of a list read as its listing (src/db/listing.ts): what the page was asked for, the listing's text
 * (the page's rows and the one after, which says whether there is a next page), and the page it makes.
 */
export interface ListingPage {
  /** The list, the tenant and the query: the same key and the same listing are the same answer. */
  key: string;
  listing: string;
  pageSize: number;
  /** The page's rows and its next cursor (parsed from the listing when called). */
  read(): Page<ListedVersion>;
  /** The cursor after a row of the list (its `seq`): where a page cut at `PAGE_BYTES` goes on. */
  cursorAfter(position: number): string;
}

/**
 * Reads one page of a list ordered by `seq` as `readPage` does, as its listing: `fetch` gives the listing of
 * `limit` rows at least after `afterSeq` (`readListing`). `query` is the whole of the request's query (its filters
 * included), which, with the list and the tenant, is the page's key.
 */
export async function readListingPage(
  cursors: CursorCodec,
  list: string,
  tenantId: string,
  query: PageParameters,
  fetch: (afterSeq: number | undefined, limit: number) => Promise<string>,
): Promise<ListingPage> {
  const { pageSize, after } = pageAsked(cursors, list, tenantId, query);
  const listing = await fetch(after, pageSize + 1);
  return {
    key: `${list}\u0000${tenantId}\u0000${JSON.stringify(query)}`,
    listing,
    pageSize,
    read: () => cursors.page(list, tenantId, parseListing(listing), pageSize, (row) => row.seq),
    cursorAfter: (position) => cursors.encode(list, tenantId, position),
  };
}
