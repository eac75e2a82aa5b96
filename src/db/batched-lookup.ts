/**
 * Reads of single rows by key, gathered into one statement per turn of the event loop. Requests that
 * arrive together (one poll of the sockets) each ask for their row; the lookups wait for the check phase
 * (`setImmediate`), which comes right after that poll, and then go to the database as one query for all
 * of them. One round trip, one statement and one result for N requests instead of N of each: on the
 * bench's 2 cores the round trip (a socket write that wakes a backend) costs more than the JavaScript
 * around it (docs/decisions.md, Performance and scale-out).
 *
 * The query starts after every request in the batch arrived, so each still reads what was committed
 * before it arrived: a read after a write answered to the same client sees that write. Only for reads
 * outside a transaction; inside one, read the row with the transaction.
 */

import { isDataException } from './errors.js';
import { TurnQueue } from './turn-queue.js';

/**
 * At most this many lookups per statement; more go in further statements of the same turn. Each lookup
 * finds its row among the batch's rows by comparing (at most this many comparisons a lookup): a map
 * keyed by strings made per request would intern every key in V8's string table, which cost more than
 * the comparisons in a profile of GETs by id.
 */
const MAX_BATCH = 64;

interface Waiting<Args, Row> {
  args: Args;
  resolve: (row: Row | undefined) => void;
  reject: (error: unknown) => void;
}

export class BatchedLookup<Args extends unknown[], Row> {
  private readonly waiting = new TurnQueue<Waiting<Args, Row>>((lookups) => {
    for (let start = 0; start < lookups.length; start += MAX_BATCH) this.read(lookups.slice(start, start + MAX_BATCH));
  });

  /**
   * @param answers whether a row is the one a lookup with these arguments asks for
   * @param fetch reads the rows of many lookups in one statement (rows not found are simply absent).
   */
  constructor(
    private readonly answers: (row: Row, ...args: Args) => boolean,
    private readonly fetch: (lookups: Args[]) => Promise<Row[]>,
  ) {}

  /** The row for these arguments, or undefined. */
  find(...args: Args): Promise<Row | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.add({ args, resolve, reject });
    });
  }

  /** One statement for the batch; each lookup gets the row that answers it. */
  private read(batch: Waiting<Args, Row>[]): void {
    this.fetch(batch.map((lookup) => lookup.args)).then(
      (rows) => {
        for (const lookup of batch) lookup.resolve(rows.find((row) => this.answers(row, ...lookup.args)));
      },
      (error: unknown) => {
        // A value the database refused (a data exception) is one lookup's fault: the others of its batch
        // are read alone rather than failed with it. Anything else (the database gone) fails them all.
        if (batch.length > 1 && isDataException(error)) for (const lookup of batch) this.read([lookup]);
        else for (const lookup of batch) lookup.reject(error);
      },
    );
  }
}
