/**
 * Several prepared statements sent to PostgreSQL in one write and run as one transaction: each statement's
 * Parse (the first time on a connection), Bind, Describe (only while its rows' shape is unknown) and Execute,
 * then a single Sync. PostgreSQL runs the messages up to a Sync as one implicit transaction, so the
 * statements commit together (one commit, one WAL flush) or, at the first error, not at all: the messages
 * after a failed one are skipped until the Sync. A batch of one is how every named statement runs.
 *
 * It is a pg "submittable" (the protocol pg-cursor uses): the client queues it like any query and hands it
 * the backend's messages until the Sync's ReadyForQuery. pg itself only pipelines with a Sync per query,
 * which commits every statement on its own, and describes every execution of a named statement again.
 */
import pg from 'pg';
import { isoTimeOf, YEAR_10000_MS } from '../lib/iso-time.js';

/** One statement of a batch: its prepared name, its text and its parameters. */
export interface BatchedStatement {
  name: string;
  text: string;
  values: readonly unknown[];
}

/** What a statement answered: its rows, and its command tag's command and row count (as pg's Result). */
export interface StatementResult {
  rows: Record<string, unknown>[];
  command: string | null;
  rowCount: number | null;
}

/** The part of pg's connection a submittable writes to (pg/lib/connection.js). */
interface ProtocolConnection {
  parsedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
  parse(message: { name: string; text: string; types: unknown[] }): void;
  bind(message: { statement: string; values: readonly unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
  on(event: 'parseComplete', listener: () => void): void;
  removeListener(event: 'parseComplete', listener: () => void): void;
}

/** A column of a RowDescription (pg-protocol's Field), as far as a row's parsing needs it. */
interface Field {
  name: string;
  dataTypeID: number;
  format: 'text' | 'binary';
}

export type TypeParsers = { getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown };

const { utils } = pg as unknown as { utils: { prepareValue: (value: unknown) => unknown } };

/**
 * A parameter as pg sends it, but a Date of 1970 to 9999 as ISO 8601 in UTC (`isoTimeOf`) rather than pg's
 * text of it in the process's zone: the same instant to a timestamptz, which every time column of the schema
 * is, for a third of the formatting's cost (a create binds two to four). pg formats any other Date (an
 * earlier or invalid one) as it always did.
 */
function prepareValue(value: unknown): unknown {
  if (value instanceof Date) {
    const time = value.getTime();
    if (time >= 0 && time < YEAR_10000_MS) return isoTimeOf(value);
  }
  return utils.prepareValue(value);
}

/** How a statement's rows are read: its columns' names and their values' parsers. */
class RowShape {
  private readonly names: string[];
  private readonly parsers: ((value: string) => unknown)[];

  constructor(fields: readonly Field[], types: TypeParsers) {
    this.names = fields.map((field) => field.name);
    this.parsers = fields.map((field) => types.getTypeParser(field.dataTypeID, field.format || 'text'));
  }

  row(values: readonly (string | null)[]): Record<string, unknown> {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < values.length; i++) {
      const value = values[i]!;
      row[this.names[i]!] = value === null ? null : this.parsers[i]!(value);
    }
    return row;
  }
}

/**
 * The row shapes of a pool's named statements, learnt from their first Describe. A name stands for one text
 * (prepared-statements.ts), and a connection that parses it describes it again, so a shape changed by a
 * migration is learnt anew wherever it could apply; a connection that kept the old statement is refused by
 * PostgreSQL instead (and the text is named anew).
 */
export class RowShapes {
  private readonly shapes = new Map<string, RowShape>();

  constructor(private readonly types: TypeParsers) {}

  get(name: string): RowShape | undefined {
    return this.shapes.get(name);
  }

  learn(name: string, fields: readonly Field[]): RowShape {
    const shape = new RowShape(fields, this.types);
    this.shapes.set(name, shape);
    return shape;
  }
}

/** A statement's answer as it arrives: undescribed until its shape is known. */
interface Answer extends StatementResult {
  shape: RowShape | undefined;
  described: boolean;
}

const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

/**
 * The statements as one transaction; `run(client)` answers each statement's result, in order, or rejects
 * with the first error (nothing of the batch is then committed).
 */
export class StatementBatch {
  /** Called once with the outcome; set by `run`, and wrapped by pg's client.query in its query_timeout. */
  callback: ((error: Error | null, results?: StatementResult[]) => void) | undefined;
  private readonly answers: Answer[] = [];
  private current = 0;
  /** The statement the batch failed at (its index), once it failed. */
  failedAt: number | undefined;
  private connection: ProtocolConnection | undefined;
  /** The statements whose Parse was sent, in order: each ParseComplete confirms the next one. */
  private readonly parsing: BatchedStatement[] = [];
  private readonly onParseComplete = () => {
    const statement = this.parsing.shift();
    if (statement && this.connection) this.connection.parsedStatements[statement.name] = statement.text;
  };

  constructor(
    private readonly statements: readonly BatchedStatement[],
    private readonly shapes: RowShapes,
  ) {}

  run(client: pg.PoolClient): Promise<StatementResult[]> {
    return new Promise((resolve, reject) => {
      this.callback = (error, results) => (error ? reject(error) : resolve(results!));
      (client as unknown as { query(submittable: StatementBatch): void }).query(this);
    });
  }

  /** Writes the whole batch at once (pg calls this when the connection is free). */
  submit(connection: ProtocolConnection): null {
    this.connection = connection;
    connection.on('parseComplete', this.onParseComplete);
    const parsedHere = new Set<string>();
    connection.stream.cork?.();
    try {
      for (const statement of this.statements) {
        if (connection.parsedStatements[statement.name] === undefined && !parsedHere.has(statement.name)) {
          connection.parse({ name: statement.name, text: statement.text, types: [] });
          parsedHere.add(statement.name);
          this.parsing.push(statement);
        }
        // Parsed on this connection by this batch: described again, in case its shape changed.
        const shape = parsedHere.has(statement.name) ? undefined : this.shapes.get(statement.name);
        connection.bind({ statement: statement.name, values: statement.values, valueMapper: prepareValue });
        if (shape === undefined) connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
        this.answers.push({ rows: [], command: null, rowCount: null, shape, described: shape === undefined });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: Field[] }): void {
    const answer = this.answers[this.current];
    const statement = this.statements[this.current];
    if (answer && statement) answer.shape = this.shapes.learn(statement.name, message.fields);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const shape = this.answers[this.current]?.shape;
    if (shape) this.answers[this.current]!.rows.push(shape.row(message.fields));
    // Never without a Describe first: a row of unknown shape would be lost, so the batch fails instead.
    else this.handleError(new Error('a row came with no description of its shape'));
  }

  handleCommandComplete(message: { text: string }): void {
    const answer = this.answers[this.current];
    const statement = this.statements[this.current];
    if (answer && statement) {
      // Described and no RowDescription came (NoData): the statement returns no rows.
      if (answer.described && answer.shape === undefined) this.shapes.learn(statement.name, []);
      const tag = COMMAND_TAG.exec(message.text);
      if (tag) {
        answer.command = tag[1]!;
        const count = tag[3] ?? tag[2];
        if (count !== undefined) answer.rowCount = Number(count);
      }
    }
    this.current += 1;
  }

  handleEmptyQuery(): void {
    this.current += 1;
  }

  handlePortalSuspended(): void {
    // Every Execute asks for all rows: never suspended.
  }

  handleCopyInResponse(): void {
    // No statement of a batch copies.
  }

  handleError(error: Error): void {
    if (this.failedAt !== undefined) return;
    this.failedAt = this.current;
    this.finish();
    this.callback?.(error);
  }

  handleReadyForQuery(): void {
    if (this.failedAt !== undefined) return;
    this.finish();
    if (this.current !== this.statements.length) {
      this.callback?.(new Error(`a batch of ${this.statements.length} statements completed ${this.current}`));
      return;
    }
    this.callback?.(
      null,
      this.answers.map(({ rows, command, rowCount }) => ({ rows, command, rowCount })),
    );
  }

  private finish(): void {
    this.connection?.removeListener('parseComplete', this.onParseComplete);
  }
}
