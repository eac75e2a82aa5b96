/**
 * One INSERT of a row whose every column the repository sets (also those the database would default), so
 * that the response is known before the row is written: the repositories describe such a row, the
 * idempotency protocol runs it alone or inside its one-statement create. Writes that belong with the row
 * (its event and the event's deliveries) can ride in the same statement as companions. A row built from
 * what was read before (its references) carries a guard: the statement checks that what was read still
 * holds, and inserts nothing when it does not.
 */
import { type CompiledQuery, type RawBuilder, type SqlBool, sql } from 'kysely';
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
  /**
   * What the row was built from, checked in its statement: where it does not hold, nothing is written (only
   * for the row of a `ReadFirstCreate`, http/idempotency.ts, which then creates its transactional way).
   */
  guard?: InsertGuard;
}

/**
 * A condition on what a row was built from (the references it names, as read before its statement), which
 * the statement evaluates once, as `guard.holds`, before its insert.
 */
export interface InsertGuard {
  /** The same key for the same text: statements are compiled once per shape. */
  shape: string;
  condition: RawBuilder<SqlBool>;
  /** The values of the placeholders of `condition`, in order. */
  parameters: readonly unknown[];
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
  /**
   * What the statement returns of the companions' writes, as `companions` (the deliveries queued, say): a
   * select-list expression over their tables, with no placeholders.
   */
  outcome: RawBuilder<unknown>;
}

/**
 * What an insert did: whether the row was written, whether its guard held (always, without one: when it
 * held, a row not written was a duplicate), and the companions' outcome (null or undefined without them).
 */
export interface InsertOutcome {
  created: boolean;
  guarded: boolean;
  companions: unknown;
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

/**
 * `guard as (...)` when the insert has one, then `inserted as (<the row's insert>)`, then the companions'
 * expressions. `from` adds `guardHolds` to its condition where there is a guard.
 */
export function insertedWithCompanions(insert: SingleRowInsert, from: RawBuilder<unknown>): RawBuilder<unknown> {
  const guarded = insert.guard ? sql`guard as (select ${insert.guard.condition} as holds), ` : sql``;
  const row = sql`${guarded}inserted as (${insertRowStatement(insert, from)})`;
  return insert.companions ? sql`${row}, ${insert.companions.ctes}` : row;
}

/** Whether the insert's guard held, as an expression of its statement (true without one). */
export function guardHolds(insert: SingleRowInsert): RawBuilder<SqlBool> {
  return insert.guard ? sql<SqlBool>`(select holds from guard)` : sql<SqlBool>`true`;
}

/** The companions' outcome as a select-list expression (null without companions). */
export function companionsOutcome(insert: SingleRowInsert): RawBuilder<unknown> {
  return insert.companions ? insert.companions.outcome : sql`null`;
}

/** What a single-row statement's text depends on: the table, the columns, the constraint, companions and guard. */
export function insertShape(insert: SingleRowInsert): string {
  return `${insert.table}|${insert.uniqueConstraint}|${Object.keys(insert.row).join(',')}|${insert.companions?.shape ?? ''}|${insert.guard?.shape ?? ''}`;
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

/** The insert's statement as Kysely builds it: alone, or with its guard, its companions and their outcome. */
function insertStatement(insert: SingleRowInsert) {
  if (!insert.companions && !insert.guard) return sql<InsertedRow>`${insertRowStatement(insert, sql``)} ${prepared()}`;
  const from = insert.guard ? sql`where ${guardHolds(insert)}` : sql``;
  return sql<InsertedRow>`
    with ${insertedWithCompanions(insert, from)}
    select exists (select from inserted) as created, ${guardHolds(insert)} as guarded,
      ${companionsOutcome(insert)} as companions ${prepared()}`;
}

/** A row of the statement: `one` alone (a row when inserted); `created`, `guarded`, `companions` otherwise. */
interface InsertedRow {
  one?: number;
  created?: boolean;
  guarded?: boolean;
  companions?: unknown;
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

/** The insert's parameters in the order of its placeholders: the guard's, the row's, the companions'. */
export function insertParameters(insert: SingleRowInsert): unknown[] {
  return [...(insert.guard?.parameters ?? []), ...Object.values(insert.row), ...(insert.companions?.parameters ?? [])];
}

/** The insert's statement compiled once per shape, as the keyed create's (idempotency-keys.ts). */
const compiledInserts = new CompiledShapes<InsertedRow>();

function compiledInsert(executor: Executor, insert: SingleRowInsert): CompiledQuery<InsertedRow> {
  return compiledInserts.statement(insertShape(insert), insertParameters(insert), () =>
    insertStatement(insert).compile(executor),
  );
}

/**
 * Inserts the tenant's row, with its companions when it has any; `created` is false when it was a duplicate.
 * Outside a transaction it runs with the other writes of this turn (turn-batches.ts).
 */
export async function insertSingleRow(
  executor: Executor,
  tenantId: string,
  insert: SingleRowInsert,
): Promise<InsertOutcome> {
  const rows = await runInTurnBatch(executor, compiledInsert(executor, insert), tenantId);
  if (!insert.companions && !insert.guard) return { created: rows.length > 0, guarded: true, companions: undefined };
  const [row] = rows;
  return { created: row!.created!, guarded: row!.guarded!, companions: row!.companions };
}
