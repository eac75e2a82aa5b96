/**
 * The items of one turn of the event loop, handed over together: the first item of a turn schedules the
 * hand-over for the check phase (`setImmediate`), which comes right after the poll that read the turn's
 * requests, so that everything those requests asked for in that turn goes out at once. Shared by the
 * batched reads by key (batched-lookup.ts) and the batched statements (turn-batches.ts).
 */
export class TurnQueue<T> {
  private items: T[] = [];

  /** @param flush takes the turn's items, in the order they were added. */
  constructor(private readonly flush: (items: T[]) => void) {}

  add(item: T): void {
    this.items.push(item);
    if (this.items.length === 1) setImmediate(() => this.handOver());
  }

  private handOver(): void {
    const items = this.items;
    this.items = [];
    this.flush(items);
  }
}
