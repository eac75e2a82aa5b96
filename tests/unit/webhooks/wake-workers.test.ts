/**
 * outbox/wake-workers.ts: a failed wake is a warning in the logger it was given (buildApp gives the app's).
 * One failing because the database is closing is tested through the app (webhooks/wake-after-commit).
 * A worker of the same process is woken directly, before the notify (and whether or not it arrives).
 */
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/db/database.js';
import { logWakeFailuresTo, wakeHere, wakeWorkers } from '../../../src/modules/outbox/wake-workers.js';
import { capturedLog, LOG_LEVEL } from '../../helpers/log-lines.js';

describe('a failed wake', () => {
  it('is a warning in the logger it was given when the database cannot be reached', async () => {
    // Nothing listens on port 1: the wake's connection is refused at once.
    const database = openPostgres('postgres://postgres@127.0.0.1:1/unreachable', 1);
    const log = capturedLog();
    logWakeFailuresTo(database.db, log.logger);
    try {
      wakeWorkers(database.db);
      const line = await log.waitFor(() => true);
      expect(line).toMatchObject({ level: LOG_LEVEL.warn, err: { message: expect.stringContaining('ECONNREFUSED') } });
      expect(log.lines).toHaveLength(1);
    } finally {
      await database.close();
    }
  });
});

describe('a worker of this process', () => {
  it('is woken at once by a wake on its handle, until it unregisters; a worker of another handle is not', async () => {
    const database = openPostgres('postgres://postgres@127.0.0.1:1/unreachable', 1);
    const other = openPostgres('postgres://postgres@127.0.0.1:1/unreachable', 1);
    logWakeFailuresTo(database.db, capturedLog().logger);
    let woken = 0;
    let otherWoken = 0;
    const stop = wakeHere(database.db, { wake: () => woken++, claimAtBirth: () => undefined });
    wakeHere(other.db, { wake: () => otherWoken++, claimAtBirth: () => undefined });
    try {
      wakeWorkers(database.db);
      expect([woken, otherWoken]).toEqual([1, 0]);
      stop();
      wakeWorkers(database.db);
      expect(woken).toBe(1);
    } finally {
      await Promise.all([database.close(), other.close()]);
    }
  });
});
