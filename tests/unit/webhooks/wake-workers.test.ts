/**
 * outbox/wake-workers.ts: a failed wake is a warning in the logger it was given (buildApp gives the app's).
 * One failing because the database is closing is tested through the app (webhooks/wake-after-commit).
 */
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/db/database.js';
import { logWakeFailuresTo, wakeWorkers } from '../../../src/modules/outbox/wake-workers.js';
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
