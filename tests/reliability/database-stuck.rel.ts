/**
 * PostgreSQL slow or stuck rather than gone (the database-outage suite's other half). The API process runs
 * with a 1 s statement timeout (DATABASE_STATEMENT_TIMEOUT_MS) and reaches PostgreSQL through a TCP proxy,
 * while writers, a reader of the sites and a bystander reading projects keep going.
 * - Locked table: another connection holds an ACCESS EXCLUSIVE lock on `sites`. Requests on sites answer
 *   503 `service-unavailable` within about the statement timeout (57014), the bystander is served, and
 *   once the lock is released the same process serves sites again.
 * - Silent database: the proxy stops carrying bytes on the open connections and accepts new ones without
 *   ever answering. Every request answers 503 within the client query timeout (a pooled connection) or the
 *   pool's connect timeout (a new one): no hang; when the database answers again the pool recovers.
 * Never a 500, never internals.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CONNECT_TIMEOUT_MS, clientQueryTimeoutMs } from '../../src/db/database.js';
import type { HttpClient } from '../helpers/http.js';
import { siteBody } from '../helpers/tenants.js';
import { POSTGRES_SERVER_URL } from './lib/global-setup.js';
import { reportFigure, scaled } from './lib/figures.js';
import { type FaultStage, faultStage, until } from './lib/service.js';
import { TcpProxy } from './lib/tcp-proxy.js';

const STATEMENT_TIMEOUT_MS = 1_000;
const CLIENT_TIMEOUT_MS = clientQueryTimeoutMs(STATEMENT_TIMEOUT_MS);
const LOCK_MS = scaled(3_000, 15_000);
/** Longer than the slowest bounded answer (connect timeout and client timeout), so that it shows. */
const STALL_MS = scaled(8_000, 20_000);
/** Scheduling slack of a loaded 2-core machine on top of a timeout. */
const SLACK_MS = 1_000;

let proxy: TcpProxy;
let stage: FaultStage;
let token: string;
beforeAll(async () => {
  proxy = await TcpProxy.start({ port: Number(new URL(POSTGRES_SERVER_URL).port || 5432) });
  stage = await faultStage('database-stuck', (url) => {
    const through = new URL(url);
    through.port = String(proxy.port);
    return through.toString();
  });
  await stage.startApi({ DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
  token = (await stage.tenant()).token;
});
afterAll(async () => {
  await stage?.close();
  await proxy?.close();
});

interface Sample {
  kind: 'write' | 'read' | 'bystander';
  status: number;
  ms: number;
  startedAt: number;
  text: string;
}

/** Four writers of sites, a reader of sites and a bystander reading projects, until stopped. */
function startLoad(http: HttpClient) {
  const samples: Sample[] = [];
  let running = true;
  const loop = async (kind: Sample['kind'], request: () => ReturnType<HttpClient['get']>) => {
    while (running) {
      const startedAt = Date.now();
      const response = await request();
      samples.push({
        kind,
        status: response.status,
        ms: Date.now() - startedAt,
        startedAt,
        text: response.text.slice(0, 300),
      });
    }
  };
  const write = () =>
    http.post('/api/v1/sites', { token, json: siteBody(), headers: { 'idempotency-key': `rel-${randomUUID()}` } });
  const loops = Promise.all([
    ...Array.from({ length: 4 }, () => loop('write', write)),
    loop('read', () => http.get('/api/v1/sites', { token, query: { 'page[size]': 5 } })),
    loop('bystander', () => http.get('/api/v1/projects', { token })),
  ]);
  return {
    samples,
    async stop() {
      running = false;
      await loops;
    },
  };
}

/** Only successes and 503 problems without internals; returns the 503s. */
function expectOnlyAnswers(samples: Sample[]): Sample[] {
  const unexpected = samples.filter((each) => ![200, 201, 503].includes(each.status));
  expect(unexpected.map((each) => `${each.status} ${each.text}`)).toEqual([]);
  const refused = samples.filter((each) => each.status === 503);
  for (const each of refused) {
    expect(each.text).toMatch(/service-unavailable/);
    expect(each.text).not.toMatch(/timeout|cancel|lock|stack|at async|node_modules|5432/i);
  }
  return refused;
}

/** Milliseconds from `since` to the end of the first success of `kind` started after it. */
async function recovery(samples: Sample[], kind: Sample['kind'], since: number): Promise<number> {
  const served = () => samples.filter((each) => each.kind === kind && each.startedAt >= since && each.status < 300);
  await until(() => served().length > 0, `a ${kind} after ${since}`, 30_000);
  return Math.min(...served().map((each) => each.startedAt + each.ms)) - since;
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

it('a locked table: 503 within about the statement timeout, others served, recovers when released', {
  timeout: 120_000,
}, async () => {
  const load = startLoad(stage.operator.http);
  await until(() => load.samples.filter((each) => each.status === 201).length >= 10, 'writes before the lock');
  const holder = new pg.Client({ connectionString: stage.databaseUrl });
  await holder.connect();
  await holder.query('begin');
  await holder.query('lock table sites in access exclusive mode');
  const lockStart = Date.now();
  await new Promise((resolve) => setTimeout(resolve, LOCK_MS));
  // The lock goes at some moment between asking and hearing back: a request that ended before the asking
  // was blocked all along; one that ended after it may have been let through.
  const releaseAsked = Date.now();
  await holder.query('rollback');
  const lockEnd = Date.now();
  await holder.end();
  const recoveredMs = await recovery(load.samples, 'write', lockEnd);
  await load.stop();

  expectOnlyAnswers(load.samples);
  const during = load.samples.filter((each) => each.startedAt >= lockStart && each.startedAt < lockEnd);
  const onSites = during.filter((each) => each.kind !== 'bystander');
  // Answered 503 unless the lock was released while it waited.
  const blocked = onSites.filter((each) => each.startedAt + each.ms < releaseAsked);
  expect(blocked.length).toBeGreaterThan(0);
  expect(blocked.filter((each) => each.status !== 503)).toEqual([]);
  const slowest = Math.max(...onSites.map((each) => each.ms));
  expect(slowest).toBeLessThan(STATEMENT_TIMEOUT_MS + SLACK_MS);
  const bystanders = during.filter((each) => each.kind === 'bystander');
  expect(bystanders.length).toBeGreaterThan(0);
  expect(bystanders.filter((each) => each.status !== 200)).toEqual([]);
  expect(recoveredMs).toBeLessThan(5_000);

  reportFigure(
    'database-locked',
    `${LOCK_MS / 1000} s ACCESS EXCLUSIVE lock on sites, statement timeout ${STATEMENT_TIMEOUT_MS} ms: ` +
      `${blocked.length}/${blocked.length} site requests answered 503 problem (median ${percentile(
        blocked.map((each) => each.ms),
        0.5,
      )} ms, slowest ${slowest} ms), 0 500s; ` +
      `${bystanders.length}/${bystanders.length} project reads served meanwhile (slowest ${Math.max(...bystanders.map((each) => each.ms))} ms); writes again ${recoveredMs} ms after release`,
  );
});

it('a silent database: 503 within the client or connect timeout, no hang, the pool recovers', {
  timeout: 120_000,
}, async () => {
  const load = startLoad(stage.operator.http);
  await until(() => load.samples.filter((each) => each.status === 201).length >= 10, 'writes before the stall');
  await proxy.setMode('stall');
  const stallStart = Date.now();
  await new Promise((resolve) => setTimeout(resolve, STALL_MS));
  const stallEnd = Date.now();
  await proxy.setMode('forward');
  const recoveredMs = await recovery(load.samples, 'write', stallEnd);
  await until(
    () => load.samples.filter((each) => each.startedAt > stallEnd + recoveredMs && each.status === 201).length >= 10,
    'writes after recovery',
  );
  await load.stop();

  expectOnlyAnswers(load.samples);
  const during = load.samples.filter((each) => each.startedAt >= stallStart && each.startedAt < stallEnd);
  // Finished while the database was still silent: each one a 503, none slower than its bound.
  const settled = during.filter((each) => each.startedAt + each.ms < stallEnd);
  expect(settled.length).toBeGreaterThan(0);
  expect(settled.filter((each) => each.status !== 503)).toEqual([]);
  const bound = CONNECT_TIMEOUT_MS + CLIENT_TIMEOUT_MS;
  const slowest = Math.max(...during.map((each) => each.ms));
  expect(slowest).toBeLessThan(bound + SLACK_MS);
  // In flight when it fell silent: a request whose query was sent and never answered is ended by the client
  // timeout (503); the others had their answer. On a quiet machine a request takes a few ms, so a run may catch
  // none of the first kind: what holds either way is that each caught request ends, within the bound.
  const caught = load.samples.filter((each) => each.startedAt < stallStart && each.startedAt + each.ms > stallStart);
  const caughtRefused = caught.filter((each) => each.status === 503);
  expect(caught.filter((each) => each.status !== 503 && each.status >= 300)).toEqual([]);
  const caughtSlowest = Math.max(0, ...caught.map((each) => each.startedAt + each.ms - stallStart));
  expect(caughtSlowest).toBeLessThan(CLIENT_TIMEOUT_MS + SLACK_MS);
  expect(recoveredMs).toBeLessThan(10_000);

  reportFigure(
    'database-silent',
    `${STALL_MS / 1000} s database accepting and never answering, client query timeout ${CLIENT_TIMEOUT_MS} ms, connect timeout ${CONNECT_TIMEOUT_MS} ms: ` +
      `${caughtRefused.length}/${caught.length} requests in flight answered 503 problem within ${caughtSlowest} ms (the rest had their answer), ` +
      `${settled.length}/${settled.length} started later answered 503 problem (slowest ${slowest} ms, bound ${bound} ms), 0 500s, 0 hangs; ` +
      `writes again ${recoveredMs} ms after it answered, same process`,
  );
});
