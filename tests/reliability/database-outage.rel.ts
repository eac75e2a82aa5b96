/**
 * PostgreSQL restarted under load. The API process reaches PostgreSQL through a TCP proxy; for a stretch
 * the proxy drops every connection and refuses new ones (what a database restart looks like to the
 * service; the machine's shared cluster is left alone), then lets them through again. Writers and readers
 * keep going throughout. During the outage every answer is a fast 503 service-unavailable problem (never a
 * hang, never a 500, no internals); afterwards the same process serves again without a restart; every
 * acknowledged create is in the database, and retrying the refused ones under their Idempotency-Key
 * leaves exactly one site per key.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { siteBody } from '../helpers/tenants.js';
import { POSTGRES_SERVER_URL } from './lib/global-setup.js';
import { reportFigure, scaled } from './lib/figures.js';
import { type FaultStage, faultStage, type Service, until } from './lib/service.js';
import { TcpProxy } from './lib/tcp-proxy.js';

const OUTAGE_MS = scaled(4_000, 15_000);
const WRITERS = 4;
/** What "fast" means for an answer during the outage (the pool's connect timeout is 5 s). */
const FAST_MS = 2_000;

let proxy: TcpProxy;
let stage: FaultStage;
let token: string;
let api: Service;
beforeAll(async () => {
  proxy = await TcpProxy.start({ port: Number(new URL(POSTGRES_SERVER_URL).port || 5432) });
  stage = await faultStage('database-outage', (url) => {
    const through = new URL(url);
    through.port = String(proxy.port);
    return through.toString();
  });
  api = await stage.startApi();
  token = (await stage.tenant()).token;
});
afterAll(async () => {
  await stage?.close();
  await proxy?.close();
});

interface Attempt {
  key: string;
  body: ReturnType<typeof siteBody>;
  status: number;
  type: string | undefined;
  ms: number;
  startedAt: number;
  siteId?: string;
  text: string;
}

it('answers fast 503s during a database restart, recovers without a restart, loses no acknowledged write', {
  timeout: 240_000,
}, async () => {
  const http = stage.operator.http;
  const attempts: Attempt[] = [];
  const reads: Array<{ status: number; ms: number; startedAt: number; text: string }> = [];
  let running = true;
  const writer = async () => {
    while (running) {
      const body = siteBody();
      const key = `rel-${randomUUID()}`;
      const startedAt = Date.now();
      const response = await http.post('/api/v1/sites', { token, json: body, headers: { 'idempotency-key': key } });
      attempts.push({
        key,
        body,
        status: response.status,
        type: response.body?.type,
        ms: Date.now() - startedAt,
        startedAt,
        siteId: response.body?.data?.id,
        text: response.text.slice(0, 300),
      });
    }
  };
  const reader = async () => {
    while (running) {
      const startedAt = Date.now();
      const response = await http.get('/api/v1/sites', { token, query: { 'page[size]': 5 } });
      reads.push({ status: response.status, ms: Date.now() - startedAt, startedAt, text: response.text.slice(0, 300) });
    }
  };
  const load = Promise.all([...Array.from({ length: WRITERS }, writer), reader()]);

  await until(
    () => attempts.filter((attempt) => attempt.status === 201).length >= 20,
    'writes before the outage',
    30_000,
  );
  await proxy.setMode('refuse');
  const outageStart = Date.now();
  await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
  const outageEnd = Date.now();
  await proxy.setMode('forward');
  // Recovery: the same process answers 201 again.
  await until(
    () => attempts.some((attempt) => attempt.startedAt > outageEnd && attempt.status === 201),
    () => `a write after the outage (api exit ${api.child.exitCode}):\n${api.output().slice(-4000)}`,
    30_000,
  );
  const recoveredAt = Math.min(
    ...attempts
      .filter((attempt) => attempt.startedAt > outageEnd && attempt.status === 201)
      .map((attempt) => attempt.startedAt + attempt.ms),
  );
  await until(
    () => attempts.filter((attempt) => attempt.startedAt > recoveredAt).length >= 20,
    'writes after recovery',
    30_000,
  );
  running = false;
  await load;

  // Only 201/200 or 503 service-unavailable problems, ever; the 503s are fast.
  const all = [...attempts, ...reads];
  const unexpected = all.filter((each) => ![200, 201, 503].includes(each.status));
  expect(unexpected.map((each) => `${each.status} ${each.text}`)).toEqual([]);
  const refused = all.filter((each) => each.status === 503);
  for (const each of refused) {
    expect(each.text).toMatch(/service-unavailable/);
    expect(each.text).not.toMatch(/ECONNREFUSED|stack|at async|node_modules|5432/);
  }
  const during = all.filter((each) => each.startedAt >= outageStart && each.startedAt < outageEnd);
  const slowest = Math.max(...during.map((each) => each.ms));
  expect(refused.length).toBeGreaterThan(0);
  expect(slowest).toBeLessThan(FAST_MS);
  expect(recoveredAt - outageEnd).toBeLessThan(10_000);

  // No acknowledged write lost.
  const acknowledged = attempts.filter((attempt) => attempt.status === 201);
  const stored = new Set((await stage.rows<{ id: string }>('select id from sites')).map((row) => row.id));
  const lost = acknowledged.filter((attempt) => !stored.has(attempt.siteId!));
  expect(lost).toEqual([]);
  // The refused creates, retried under their key: exactly one site per key.
  const retried = attempts.filter((attempt) => attempt.status === 503);
  const queue = [...retried];
  const retryLane = async () => {
    for (let attempt = queue.pop(); attempt; attempt = queue.pop()) {
      const again = await http.post('/api/v1/sites', {
        token,
        json: attempt.body,
        headers: { 'idempotency-key': attempt.key },
      });
      expect(again.status, again.text).toBe(201);
    }
  };
  await Promise.all(Array.from({ length: 8 }, retryLane));
  const codes = await stage.rows<{ site_code: string; n: number }>(
    'select site_code, count(*)::int as n from sites group by site_code having count(*) > 1',
  );
  expect(codes).toEqual([]);
  const retriedCodes = new Set(retried.map((attempt) => attempt.body.siteCode));
  const storedCodes = new Set(
    (await stage.rows<{ site_code: string }>('select site_code from sites')).map((row) => row.site_code),
  );
  expect([...retriedCodes].filter((code) => !storedCodes.has(code))).toEqual([]);

  reportFigure(
    'database-outage',
    `${OUTAGE_MS / 1000} s outage: ${during.filter((each) => each.status === 503).length}/${during.length} requests during it answered 503 problem (slowest ${slowest} ms), 0 500s, 0 hangs; ` +
      `recovered ${recoveredAt - outageEnd} ms after, no restart; ${acknowledged.length - lost.length}/${acknowledged.length} acknowledged writes kept, ${retried.length}/${retried.length} refused creates retried to exactly one site`,
  );
});
