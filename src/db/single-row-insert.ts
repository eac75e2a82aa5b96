/**
 * One INSERT of a row whose every column the repository sets (also those the database would default), so
 * that the response is known before the row is written: the repositories describe such a row, the
 * idempotency protocol runs it alone or inside its one-statement create. Writes that belong with the row
 * (its event and the event's deliveries) can ride in the same statement as companions.
 */
import { type CompiledQuery, type RawBuilder, sql } from 'kysely';
import type { Executor } from './executor.js';
import { prepared } from './prepared-statements.js';
import { runInTurnBatch } from './turn-batches.js';
import type { Database } from './schema.js';

export interface SingleRowInsert {
  table: keyof Database & string;
  /** Column → value; the same columns in the same order on every call (the statement is prepared). */
  row: Record<string, unknown>;
  /** The unique constraint whose conflict means the row exists already (no row is written then). */
  uniqueConstraint: string;
  /** Writes made in the same statement, only when the row is inserted. */
  companions?: CompanionWrites;
}

/**
 * Writes that go with a row in its statement: common table expressions (`name as (...), ...`) that read the
 * row's `inserted` (one row when it was inserted, none when it was a duplicate), named apart from the
 * statement's own (`inserted`, `lock`, `found`, `stored`).
 */
export interface CompanionWrites {
  /** The same key for the same text: statements are compiled once per shape. */
  shape: string;
  ctes: RawBuilder<unknown>;
  /** The values of the placeholders of `ctes`, in order (checked once per shape against Kysely's). */
  parameters: readonly unknown[];
  /** The expression whose rows the statement counts as `companion_rows` (the deliveries queued, say). */
  counted: string;
}

/** What an insert did: whether the row was written (not a duplicate), and the companions' counted rows. */
export interface InsertOutcome {
  created: boolean;
  companionRows: number;
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

/** `inserted as (<the row's insert>)`, then the companions' expressions. */
export function insertedWithCompanions(insert: SingleRowInsert, from: RawBuilder<unknown>): RawBuilder<unknown> {
  const row = sql`inserted as (${insertRowStatement(insert, from)})`;
  return insert.companions ? sql`${row}, ${insert.companions.ctes}` : row;
}

/** The companions' counted rows as a select-list expression (0 without companions). */
export function companionRows(insert: SingleRowInsert): RawBuilder<number> {
  return insert.companions
    ? sql<number>`(select count(*) from ${sql.table(insert.companions.counted)})::int`
    : sql<number>`0`;
}

/** What a single-row statement's text depends on: the table, the columns, the constraint and the companions. */
export function insertShape(insert: SingleRowInsert): string {
  return `${insert.table}|${insert.uniqueConstraint}|${Object.keys(insert.row).join(',')}|${insert.companions?.shape ?? ''}`;
}

/** Whether Kysely's compiled parameters are exactly `listed`, in order (then the text can be reused with others). */
export function listedInOrder(compiled: readonly unknown[], listed: readonly unknown[]): boolean {
  return compiled.length === listed.length && compiled.every((value, index) => Object.is(value, listed[index]));
}

/** More shapes than resources would mean a row whose columns vary: those are compiled every time. */
const MAX_SHAPES = 50;

/**
 * Statements compiled by Kysely once per shape (`insertShape`, whose text depends on nothing else), each use
 * binding its own parameters, listed by hand in placeholder order. A shape whose compiled parameters do not
 * come out as listed is compiled every time.
 */
export class CompiledShapes<R> {
  private readonly shapes = new Map<string, CompiledQuery<R> | null>();

  statement(shape: string, parameters: readonly unknown[], compile: () => CompiledQuery<R>): CompiledQuery<R> {
    const cached = this.shapes.get(shape);
    if (cached) return { ...cached, parameters };
    const compiled = compile();
    if (cached === undefined && this.shapes.size < MAX_SHAPES)
      this.shapes.set(shape, listedInOrder(compiled.parameters, parameters) ? compiled : null);
    return compiled;
  }
}

/** The insert's statement as Kysely builds it: alone, or with its companions and their count. */
function insertStatement(insert: SingleRowInsert) {
  if (!insert.companions) return sql<InsertedRow>`${insertRowStatement(insert, sql``)} ${prepared()}`;
  return sql<InsertedRow>`
    with ${insertedWithCompanions(insert, sql``)}
    select exists (select from inserted) as created, ${companionRows(insert)} as companion_rows ${prepared()}`;
}

/** A row of the statement: `one` alone (a row when inserted), `created` and `companion_rows` with companions. */
interface InsertedRow {
  one?: number;
  created?: boolean;
  companion_rows?: number;
}

/**
 * The statement compiled by Kysely, and whether its parameters came out as the row's values followed by the
 * companions' (then the compiled text serves every insert of the same shape).
 */
export function compileSingleRowInsert(
  executor: Executor,
  insert: SingleRowInsert,
): { compiled: CompiledQuery<InsertedRow>; reusable: boolean } {
  const compiled = insertStatement(insert).compile(executor);
  return { compiled, reusable: listedInOrder(compiled.parameters, insertParameters(insert)) };
}

function insertParameters(insert: SingleRowInsert): unknown[] {
  return [...Object.values(insert.row), ...(insert.companions?.parameters ?? [])];
}

/** The insert's statement compiled once per shape, as the keyed create's (idempotency-keys.ts). */
const compiledInserts = new CompiledShapes<InsertedRow>();

function compiledInsert(executor: Executor, insert: SingleRowInsert): CompiledQuery<InsertedRow> {
  return compiledInserts.statement(insertShape(insert), insertParameters(insert), () =>
    insertStatement(insert).compile(executor),
  );
}

/**
 * Inserts the row, with its companions when it has any; `created` is false when it was a duplicate. Outside
 * a transaction it runs with the other writes of this turn (turn-batches.ts).
 */
export async function insertSingleRow(executor: Executor, insert: SingleRowInsert): Promise<InsertOutcome> {
  const rows = await runInTurnBatch(executor, compiledInsert(executor, insert));
  if (!insert.companions) return { created: rows.length > 0, companionRows: 0 };
  return { created: rows[0]!.created!, companionRows: rows[0]!.companion_rows! };
}
