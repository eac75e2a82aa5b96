/**
 * A list page's listing: which rows it holds and at which versions, read as one value.
 *
 * A list reads its page's rows' ids and versions first (http/rendered-resources.ts renders only what it has
 * not rendered before). PostgreSQL writes them as one text, `id version seq` per row in list order, instead of
 * a row of three values per row: the driver then decodes one value rather than three hundred, and two
 * requests for the same page at the same versions get the same text, which tells the service that the page
 * it answered last time is still the answer without reading the text at all.
 */
import { type SelectQueryBuilder, sql } from 'kysely';
import type { Executor } from './executor.js';
import { prepared } from './prepared-statements.js';
import type { Database } from './schema.js';
import { readInTurnBatch } from './turn-batches.js';

/** A listed row: its id, its version and its place in the list (the cursor's position, `seq`). */
export interface ListedVersion {
  id: string;
  version: number;
  seq: number;
}

/**
 * How many rows a listing reads for `wanted` rows: the first of these that holds them. PostgreSQL cannot
 * cost a LIMIT given as a parameter and plans such a statement again at every execution, a third of what
 * it costs; a constant limit gets one plan per connection. A listing may so hold rows past those wanted,
 * which the page leaves out (the default page and the largest read exactly theirs).
 */
const LIMITS = [26, 101] as const;

/**
 * The listing of `rows`, a select of the tenant's rows' `id`, `version` and `seq` ordered by `seq`: its first
 * `wanted` rows at least, as one text in the order of `seq`. Outside a transaction, with the other reads of
 * the turn (list requests arrive together as much as GETs do).
 */
export async function readListing<TB extends keyof Database>(
  db: Executor,
  tenantId: string,
  rows: SelectQueryBuilder<Database, TB, ListedVersion>,
  wanted: number,
): Promise<string> {
  const limit = LIMITS.find((limit) => limit >= wanted) ?? wanted;
  const listing = db
    .selectFrom(rows.limit(sql.lit(limit)).as('l'))
    // Ids are made of letters, digits and underscores (lib/ids.ts): a space separates the values.
    .select(
      sql<string>`coalesce(string_agg(l.id || ' ' || l.version || ' ' || l.seq, ' ' order by l.seq), '')`.as('listing'),
    )
    .modifyEnd(prepared());
  const [row] = await readInTurnBatch(db, listing.compile(), tenantId);
  return row!.listing;
}

/** The rows of a listing's text (`readListing`). */
export function parseListing(text: string): ListedVersion[] {
  if (text === '') return [];
  const values = text.split(' ');
  const rows: ListedVersion[] = [];
  for (let at = 0; at + 2 < values.length; at += 3) {
    rows.push({ id: values[at]!, version: Number(values[at + 1]), seq: Number(values[at + 2]) });
  }
  return rows;
}
