/**
 * A list page's listing: which rows it holds and at which versions, read as one value.
 *
 * A list reads its page's rows' ids and versions first (http/rendered-resources.ts renders only what it has
 * not rendered before). PostgreSQL renders them as one JSON text, `[[id, version, seq], ...]` in list order,
 * instead of a row of three values per row: the driver then decodes one value rather than three hundred, and
 * two requests for the same page at the same versions get the same text, which tells the service that the
 * page it answered last time is still the answer without reading the text at all.
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
 * The listing of `rows`, a select of the rows' `id`, `version` and `seq`, ordered by `seq` and limited: one
 * JSON text, in the order of `seq`. Outside a transaction, with the other reads of the turn (list requests
 * arrive together as much as GETs do).
 */
export async function readListing<TB extends keyof Database>(
  db: Executor,
  rows: SelectQueryBuilder<Database, TB, ListedVersion>,
): Promise<string> {
  const listing = db
    .selectFrom(rows.as('l'))
    .select(
      sql<string>`coalesce(json_agg(json_build_array(l.id, l.version, l.seq) order by l.seq), '[]')::text`.as(
        'listing',
      ),
    )
    .modifyEnd(prepared());
  const [row] = await readInTurnBatch(db, listing.compile());
  return row!.listing;
}

/** The rows of a listing's text (`readListing`). */
export function parseListing(text: string): ListedVersion[] {
  return (JSON.parse(text) as [string, number, number][]).map(([id, version, seq]) => ({ id, version, seq }));
}
