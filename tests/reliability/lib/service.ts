/**
 * The service as separate OS processes for the fault suites (the bench's process helpers, run from the
 * TypeScript source so that no build is needed), each suite on a fresh PostgreSQL database of its own,
 * and the operator's view of it over HTTP.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { type Service, startService, stopProcess } from '../../../bench/lib/processes.js';
import { openEmptyDatabase } from '../../helpers/app.js';
import { HttpClient } from '../../helpers/http.js';
import { tenantWithToken } from '../../helpers/tenants.js';

export type { Service };

export interface FaultStage {
  databaseUrl: string;
  /** Environment every process of the suite shares (database, data directory, operator token). */
  env: Record<string, string>;
  operator: { http: HttpClient; adminToken: string };
  /** Starts an API process (ROLE=api unless `env` says otherwise) and points `operator` at it. */
  startApi(env?: Record<string, string>, options?: { port?: number }): Promise<Service>;
  /** Starts a delivery worker (ROLE=worker) and waits for its LISTEN connection. */
  startWorker(env?: Record<string, string>): Promise<Service>;
  /** A tenant with a token carrying all its scopes, made through the running API process. */
  tenant(): Promise<{ tenantId: string; token: string; clientId: string; clientSecret: string }>;
  /** The rows of a query on the suite's database (checked directly, past the API). */
  rows<T = Record<string, unknown>>(query: string): Promise<T[]>;
  /** The `n` of a one-row query. */
  countRows(query: string): Promise<number>;
  close(): Promise<void>;
}

/** A fresh database `ss_rel_<suite>_…` (dropped by close) and the processes started on it. */
export async function faultStage(
  suite: string,
  databaseUrlFor: (url: string) => string = (url) => url,
): Promise<FaultStage> {
  const empty = await openEmptyDatabase(`ss_rel_${suite.replace(/\W/g, '_')}`);
  if (!empty.url) throw new Error('the reliability suites run on PostgreSQL');
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `rel-${suite}-`));
  const adminToken = `adm_${randomUUID()}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrlFor(empty.url),
    DATA_DIR: directory,
    ADMIN_TOKEN: adminToken,
    RATE_LIMIT_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
  };
  const processes: Service[] = [];
  const stage: FaultStage = {
    databaseUrl: empty.url,
    env,
    operator: { http: new HttpClient('http://127.0.0.1:1'), adminToken },
    async startApi(extra = {}, options = {}) {
      const api = await startService(
        { ...env, ROLE: 'api', ...extra },
        { name: `${suite} api`, source: true, ...options },
      );
      processes.push(api);
      stage.operator.http = new HttpClient(api.baseUrl);
      return api;
    },
    async startWorker(extra = {}) {
      const workerReady = async (pid: number) =>
        (await stage.countRows(
          `select count(*)::int as n from pg_stat_activity where application_name = 'site-services listener webhook_deliveries ${pid}'`,
        )) === 1;
      const worker = await startService(
        { ...env, ROLE: 'worker', ...extra },
        { name: `${suite} worker`, source: true, workerReady },
      );
      processes.push(worker);
      return worker;
    },
    tenant: () => tenantWithToken(stage.operator),
    async rows<T>(query: string) {
      return (await sql<T>`${sql.raw(query)}`.execute(empty.database.db)).rows;
    },
    async countRows(query) {
      return (await stage.rows<{ n: number }>(query))[0]!.n;
    },
    async close() {
      await Promise.all(processes.map((each) => stopProcess(each.child, 5_000)));
      await empty.drop();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
  return stage;
}

/** Waits for a condition (polling), failing with `what` after `timeoutMs`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string | (() => string | Promise<string>),
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`${typeof what === 'string' ? what : await what()}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
