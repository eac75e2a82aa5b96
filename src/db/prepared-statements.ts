/**
 * Named prepared statements for the hottest statements on PostgreSQL. A statement built with
 * `.modifyEnd(prepared())` runs under a name derived from its text, so each pooled connection parses and
 * plans it once and afterwards only binds and executes it: about half the database's CPU for a
 * primary-key read (bench/results/history.md). Every other statement stays unnamed, so the statements a
 * connection keeps are the few marked ones (pg keeps them for the connection's life, without eviction).
 *
 * Only mark statements whose text is fixed and whose result columns are listed explicitly (no `select *`
 * or `returning *`): a prepared `*` changes its result type when a migration adds a column, and
 * PostgreSQL then refuses it ("cached plan must not change result type"), which would break the old
 * version during a rolling upgrade. Should that error happen anyway, the statement is prepared again
 * under a new name from its next execution on. On PGlite the marker is a plain comment.
 */
import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { RowShapes, StatementBatch, type TypeParsers } from './statement-batch.js';

const MARKER = '/* prepared */';
/** Distinct marked texts named per process; past it (a marked statement whose text varies) they run unnamed. */
const NAME_LIMIT = 100;

/** The marker for `.modifyEnd(...)` of a select, insert, update or delete. */
export function prepared(): RawBuilder<unknown> {
  return sql.raw(MARKER);
}

/** PostgreSQL's answer to a prepared statement whose result columns changed under it. */
function isStaleResultType(error: unknown): boolean {
  return (
    (error as { code?: string } | undefined)?.code === '0A000' &&
    /cached plan must not change result type/.test(String((error as Error).message))
  );
}

/**
 * The names of a pool's marked statements: one per text, derived from it; a text whose statement went stale
 * (its result columns changed) gets a new name.
 */
export class PreparedNames {
  private readonly names = new Map<string, string>();
  private generation = 0;
  /** The rows' shapes of the named statements, so that they are described once, not at every execution. */
  readonly shapes: RowShapes;

  constructor(types: TypeParsers) {
    this.shapes = new RowShapes(types);
  }

  /** The name of a marked text, or undefined past the limit (it then runs unnamed). */
  nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < NAME_LIMIT) {
      name = `ps_${createHash('sha1').update(text).digest('hex').slice(0, 16)}_${this.generation}`;
      this.names.set(text, name);
    }
    return name;
  }

  /** After `error` of the statement `name` of `text`: a stale statement is named anew from now on. */
  failed(text: string, name: string, error: unknown): void {
    if (isStaleResultType(error) && this.names.get(text) === name) {
      this.generation += 1;
      this.names.delete(text);
    }
  }
}

/** Whether a statement's text carries the marker. */
export function isMarked(text: string): boolean {
  return text.endsWith(MARKER);
}

/** Kysely's pool, naming the marked statements of every connection it hands out. */
export function preparingPool(pool: pg.Pool, names: PreparedNames): PostgresPool {
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const wrapped = {
      query(text: unknown, values?: unknown[]) {
        if (typeof text !== 'string' || !isMarked(text)) return client.query(text as string, values);
        const name = names.nameOf(text);
        if (name === undefined) return client.query(text, values);
        return new StatementBatch([{ name, text, values: values ?? [] }], names.shapes).run(client).then(
          ([result]) => result,
          (error: unknown) => {
            names.failed(text, name, error);
            throw error;
          },
        );
      },
      // An error makes the pool discard the connection instead of lending it again (timed-out-connections.ts).
      release: (error?: Error) => client.release(error),
    };
    return wrapped as unknown as PostgresPoolClient;
  };
  // The pool's options let Kysely open a control connection to cancel a query (an aborted signal).
  return { connect: async () => wrap(await pool.connect()), end: () => pool.end(), options: pool.options };
}
