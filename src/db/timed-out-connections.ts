/**
 * Connections whose query timed out on the client are destroyed, never lent again.
 *
 * pg's `query_timeout` rejects the query's promise but leaves the query active on its connection (pg 8:
 * outside pipeline mode the query stays at the head of the connection's queue until the server answers).
 * Lent again, such a connection would make its next user wait behind a query the database may never answer.
 * So once a query of a lent connection times out on the client, its later queries (the transaction's
 * ROLLBACK, say) fail at once with the same error, and its release passes that error to pg-pool, which
 * then removes the connection and ends it (closing the socket, since a query is still active).
 */
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { isClientQueryTimeout } from './errors.js';

type ReleasableClient = Omit<PostgresPoolClient, 'release'> & { release(error?: Error): void };

export function discardingTimedOutConnections(pool: PostgresPool): PostgresPool {
  const wrap = (client: ReleasableClient): PostgresPoolClient => {
    let timedOut: Error | undefined;
    const wrapped = {
      query(...args: unknown[]) {
        if (timedOut) return Promise.reject(timedOut);
        const result = (client.query as (...args: unknown[]) => unknown)(...args);
        // A cursor (not a promise) is passed through untouched.
        if (!(result instanceof Promise)) return result;
        return result.catch((error: unknown) => {
          if (isClientQueryTimeout(error)) timedOut ??= error as Error;
          throw error;
        });
      },
      release: () => client.release(timedOut),
    };
    return wrapped as unknown as PostgresPoolClient;
  };
  return {
    connect: async () => wrap((await pool.connect()) as ReleasableClient),
    end: () => pool.end(),
    options: pool.options,
  };
}
