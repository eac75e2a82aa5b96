/**
 * One INSERT of a row whose every column the repository sets (also those the database would default), so
 * that the response is known before the row is written: the repositories describe such a row, the
 * idempotency protocol runs it alone or inside its one-statement create.
 */
import { type RawBuilder, sql } from 'kysely';
import type { Executor } from './executor.js';
import type { Database } from './schema.js';

export interface SingleRowInsert {
  table: keyof Database & string;
  /** Column → value; the same columns in the same order on every call (the statement is prepared). */
  row: Record<string, unknown>;
  /** The unique constraint whose conflict means the row exists already (no row is written then). */
  uniqueConstraint: string;
}

/** `insert ... select <row> <from> on conflict do nothing returning 1`: the row, unless a duplicate. */
export function insertRowStatement(insert: SingleRowInsert, from: RawBuilder<unknown>): RawBuilder<{ one: number }> {
  const columns = Object.keys(insert.row);
  return sql<{
    one: number;
  }>`insert into ${sql.table(insert.table)} (${sql.join(columns.map((column) => sql.id(column)))})
    select ${sql.join(columns.map((column) => insert.row[column]))} ${from}
    on conflict on constraint ${sql.id(insert.uniqueConstraint)} do nothing returning 1 as one`;
}

/** Inserts the row; false when its unique constraint refused it as a duplicate. */
export async function insertSingleRow(executor: Executor, insert: SingleRowInsert): Promise<boolean> {
  return (await insertRowStatement(insert, sql``).execute(executor)).rows.length > 0;
}
