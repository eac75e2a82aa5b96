/**
 * Group commit: items added while a flush is running are gathered and flushed together as soon as it
 * ends, so a lone item is written at once (no added latency) and a burst costs one round trip per batch.
 */
export class Batcher<I, R> {
  private queue: Array<{ item: I; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];
  private flushing = false;

  constructor(
    /** Writes the items; answers one result per item, in order. */
    private readonly flush: (items: I[]) => Promise<R[]>,
    private readonly maxBatch = 500,
  ) {}

  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.flushing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.flush(batch.map((entry) => entry.item));
          for (const [index, entry] of batch.entries()) entry.resolve(results[index]!);
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
