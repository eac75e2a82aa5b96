/** PostgreSQL only: waiting, without a fixed sleep, until a race a test holds open has a request queued on a lock. */
import type pg from 'pg';

/** Waits until `count` connections of the database wait for a lock (asked through `client`, every 10 ms). */
export async function waitingForLocks(client: pg.Client, count = 1): Promise<void> {
  for (;;) {
    // The activity view is a snapshot held for the transaction unless cleared.
    await client.query('select pg_stat_clear_snapshot()');
    const waiting = await client.query(
      "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    if ((waiting.rowCount ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
