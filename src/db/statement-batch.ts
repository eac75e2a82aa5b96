/**
 * Several prepared statements sent to PostgreSQL in one write and run as one transaction: each statement's
 * Parse (the first time on a connection), Bind, Describe and Execute, then a single Sync. PostgreSQL runs
 * the messages up to a Sync as one implicit transaction, so the statements commit together (one commit, one
 * WAL flush) or, at the first error, not at all: the messages after a failed one are skipped until the Sync.
 *
 * It is a pg "submittable" (the protocol pg-cursor uses): the client queues it like any query and hands it
 * the backend's messages until the Sync's ReadyForQuery. pg itself only pipelines with a Sync per query,
 * which commits every statement on its own.
 */
import pg from 'pg';

/** One statement of a batch: its prepared name, its text and its parameters. */
export interface BatchedStatement {
  name: string;
  text: string;
  values: readonly unknown[];
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

interface FieldsMessage {
  fields: unknown[];
}

/** pg's Result: parses a row's text values with the client's type parsers. */
interface ParsingResult {
  rows: Record<string, unknown>[];
  addFields(fields: unknown[]): void;
  parseRow(values: unknown[]): Record<string, unknown>;
}

type TypeParsers = { getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown };

const { Result, utils } = pg as unknown as {
  Result: new (rowMode: undefined, types: TypeParsers) => ParsingResult;
  utils: { prepareValue: (value: unknown) => unknown };
};

/**
 * The statements as one transaction; `run(client)` answers each statement's rows, in order, or rejects
 * with the first error (nothing of the batch is then committed).
 */
export class StatementBatch {
  /** Called once with the outcome; set by `run`, and wrapped by pg's client.query in its query_timeout. */
  callback: ((error: Error | null, rows?: Record<string, unknown>[][]) => void) | undefined;
  private readonly results: ParsingResult[] = [];
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
    private readonly types: TypeParsers,
  ) {}

  run(client: pg.PoolClient): Promise<Record<string, unknown>[][]> {
    return new Promise((resolve, reject) => {
      this.callback = (error, rows) => (error ? reject(error) : resolve(rows!));
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
        connection.bind({ statement: statement.name, values: statement.values, valueMapper: utils.prepareValue });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
        this.results.push(new Result(undefined, this.types));
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: FieldsMessage): void {
    this.results[this.current]?.addFields(message.fields);
  }

  handleDataRow(message: FieldsMessage): void {
    const result = this.results[this.current];
    result?.rows.push(result.parseRow(message.fields));
  }

  handleCommandComplete(): void {
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
      this.results.map((result) => result.rows),
    );
  }

  private finish(): void {
    this.connection?.removeListener('parseComplete', this.onParseComplete);
  }
}
