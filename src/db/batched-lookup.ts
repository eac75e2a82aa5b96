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

/** At most this many keys per statement; more go in further statements of the same turn. */
const MAX_BATCH = 256;

interface Waiting<Args, Row> {
  args: Args;
  key: string;
  resolve: (row: Row | undefined) => void;
  reject: (error: unknown) => void;
}

export class BatchedLookup<Args extends unknown[], Row> {
  private readonly waiting = new TurnQueue<Waiting<Args, Row>>((lookups) => {
    for (let start = 0; start < lookups.length; start += MAX_BATCH) this.read(lookups.slice(start, start + MAX_BATCH));
  });

  /**
   * @param keyOf the key of a lookup's arguments, and `rowKey` the same key of a row that answers it.
   * @param fetch reads the rows of many lookups in one statement (rows not found are simply absent).
   */
  constructor(
    private readonly keyOf: (...args: Args) => string,
    private readonly rowKey: (row: Row) => string,
    private readonly fetch: (lookups: Args[]) => Promise<Row[]>,
  ) {}

  /** The row for these arguments, or undefined. */
  find(...args: Args): Promise<Row | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.add({ args, key: this.keyOf(...args), resolve, reject });
    });
  }

  /** One statement for the batch; each lookup gets the row of its own key. */
  private read(batch: Waiting<Args, Row>[]): void {
    this.fetch(batch.map((lookup) => lookup.args)).then(
      (rows) => {
        const byKey = new Map(rows.map((row) => [this.rowKey(row), row]));
        for (const lookup of batch) lookup.resolve(byKey.get(lookup.key));
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
