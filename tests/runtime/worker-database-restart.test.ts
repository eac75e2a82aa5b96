/**
 * PostgreSQL only: a delivery worker process (ROLE=worker) whose database connections all end at once (what
 * a database restart does to it; here its backends are terminated) keeps running and listens again. Found by
 * the faults-and-retries probe: with nothing else keeping Node's event loop alive, the process exited with
 * status 0 and its listener's reconnection never ran, so no worker was left to deliver.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { killAll, type RealProcess, startNode } from '../helpers/real-processes.js';

describe.skipIf(!inject('databaseUrl'))('a worker process whose database connections all end', () => {
  let own: Awaited<ReturnType<typeof openEmptyDatabase>>;
  let observer: pg.Client;
  let dataDir: string;
  beforeAll(async () => {
    own = await openEmptyDatabase('ss_worker_restart');
    observer = new pg.Client({ connectionString: own.url });
    await observer.connect();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-restart-'));
  });
  afterAll(async () => {
    killAll();
    await observer?.end();
    await own?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Resolves once the worker's listener is connected; rejects if the process exits first. */
  async function listening(worker: RealProcess): Promise<void> {
    const name = `site-services listener webhook_deliveries ${worker.child.pid}`;
    for (;;) {
      if (worker.child.exitCode !== null)
        throw new Error(`the worker exited with ${worker.child.exitCode}:\n${worker.output().slice(-2000)}`);
      const { rows } = await observer.query(
        'select count(*)::int as n from pg_stat_activity where application_name = $1',
        [name],
      );
      if (rows[0].n === 1) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('keeps running and listens again', { timeout: 120_000 }, async () => {
    const worker = startNode(['--import', 'tsx', 'src/server.ts'], {
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      ROLE: 'worker',
      DATABASE_URL: own.url!,
      DATA_DIR: dataDir,
      ADMIN_TOKEN: `adm_${randomUUID()}`,
      LOG_LEVEL: 'warn',
    });
    await worker.waitFor(/delivery worker running/, 100_000);
    await listening(worker);
    // Every connection of the database but the observer's: the listener's and the pool's at once.
    const { rows } = await observer.query(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
    );
    expect(rows[0].n).toBeGreaterThan(0);
    await listening(worker);
    expect(worker.child.exitCode).toBeNull();
  });
});
