/**
 * The cost of a refused body is bounded (issue 15, item 1), against an API process of its own with the
 * rate limit raised (the stage's RATE_LIMIT_PER_MINUTE), so that it measures refusals and not the limiter.
 * First, one at a time, bodies up to the service's 1 MiB body limit that once cost seconds and megabytes
 * (200,000 wrong siteAssetIds or eventTypes, 80,000 unknown members, deep nesting, a 1 MB string): each is
 * refused within 100 ms with at most 64 KiB, as 413 when it is longer than the route's schema admits
 * (body-limit.ts: it is then never read) or else as 422. Then twelve clients send all of them round-robin
 * (40 s with RELIABILITY_FULL=1, a few seconds in CI) while a probe polls `/health`: its p99 stays within
 * 50 ms and the process's RSS grows by at most 64 MB.
 */
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rssBytes, sleep } from '../../bench/lib/processes.js';
import { percentile } from '../../bench/lib/stats.js';
import { visitBody, visitTenant, type VisitTenant } from '../helpers/visits.js';
import { FULL, reportFigure, scaled } from './lib/figures.js';
import { type FaultStage, faultStage, type Service } from './lib/service.js';

const CLIENTS = 12;
const FLOOD_MS = scaled(4_000, 40_000);
const WARM_UP_MS = 1_000;
const BODY_LIMIT = 1024 * 1024;
const MAX_PROBLEM_BYTES = 64 * 1024;
const MAX_ANSWER_MS = 100;
const MAX_HEALTH_P99_MS = 50;
const MAX_RSS_GROWTH = 64 * 1024 * 1024;
/** Sequential sends of each body, for its latency. */
const REPEATS = scaled(10, 30);
/**
 * Status 0: the service answered 413 and closed the connection before the client had sent the whole body
 * (refused unread, as it should be); undici then reports the write's EPIPE or the reset instead of the answer.
 */
const CLOSED_UNREAD = 0;
/** Too long for the route's schema (413, unread) or read and invalid (422). */
const REFUSED = [413, 422, CLOSED_UNREAD];

let stage: FaultStage;
let api: Service;
let v: VisitTenant;
const agent = new Agent({ connections: CLIENTS + 2, keepAliveTimeout: 30_000 });

beforeAll(async () => {
  stage = await faultStage('validation-flood');
  api = await stage.startApi();
  v = await visitTenant(stage.operator);
});
afterAll(async () => {
  await agent.close();
  await stage?.close();
});

/** A valid body's JSON with `member` holding `count` copies of `item` (raw JSON). */
function withItems(body: object, member: string, item: string, count: number): Buffer {
  const text = JSON.stringify({ ...body, [member]: [] });
  return Buffer.from(text.replace(`"${member}":[]`, `"${member}":[${Array(count).fill(item).join(',')}]`));
}

function withUnknownMembers(body: object, count: number, name: (index: number) => string): Buffer {
  const members = Array.from({ length: count }, (_, index) => `${JSON.stringify(name(index))}:0`).join(',');
  return Buffer.from(`${JSON.stringify(body).slice(0, -1)},${members}}`);
}

interface Flood {
  name: string;
  path: string;
  body: Buffer;
}

function floods(): Flood[] {
  const visit = visitBody(v);
  const subscription = { targetUrl: 'https://hooks.example.com/flood', secret: 'a secret of sixteen+' };
  const depth = 250_000;
  return [
    {
      name: '200,000 wrong siteAssetIds',
      path: '/api/v1/site-visits',
      body: withItems(visit, 'siteAssetIds', '"x"', 200_000),
    },
    {
      name: '200,000 eventTypes',
      path: '/api/v1/webhook-subscriptions',
      body: withItems(subscription, 'eventTypes', '"x"', 200_000),
    },
    {
      name: '80,000 unknown members',
      path: '/api/v1/site-visits',
      body: withUnknownMembers(visit, 80_000, (i) => `u${i}`),
    },
    {
      name: '160 unknown names of 1,000 escaped characters',
      path: '/api/v1/site-visits',
      body: withUnknownMembers(visit, 160, (i) => `${i}`.padEnd(1_000, '\u0001')),
    },
    {
      name: `a siteAssetId nested ${depth} deep`,
      path: '/api/v1/site-visits',
      body: withItems(visit, 'siteAssetIds', `${'['.repeat(depth)}${']'.repeat(depth)}`, 1),
    },
    {
      name: 'a 1,000,000-character description',
      path: '/api/v1/site-visits',
      body: Buffer.from(JSON.stringify(visitBody(v, { description: 'x'.repeat(1_000_000) }))),
    },
    // Within the visit create's own limit (about 314 KiB): read, parsed and refused by validation.
    {
      name: '27,000 unknown members',
      path: '/api/v1/site-visits',
      body: withUnknownMembers(visit, 27_000, (i) => `u${i}`),
    },
    {
      name: 'a siteAssetId nested 150,000 deep',
      path: '/api/v1/site-visits',
      body: withItems(visit, 'siteAssetIds', `${'['.repeat(150_000)}${']'.repeat(150_000)}`, 1),
    },
    { name: '200 wrong siteAssetIds', path: '/api/v1/site-visits', body: withItems(visit, 'siteAssetIds', '"x"', 200) },
  ];
}

const CLOSED = new Set(['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET']);

async function send(flood: Flood): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  try {
    const response = await request(`${api.baseUrl}${flood.path}`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${v.token}`, 'content-type': 'application/json' },
      body: flood.body,
    });
    const bytes = (await response.body.arrayBuffer()).byteLength;
    return { status: response.statusCode, bytes, ms: performance.now() - started };
  } catch (error) {
    if (!CLOSED.has((error as { code?: string }).code ?? '')) throw error;
    return { status: CLOSED_UNREAD, bytes: 0, ms: performance.now() - started };
  }
}

/** CPU time (user + system) the process has used, in ms, from /proc. */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const figures: string[] = [];
let slowest = { name: '', ms: 0 };
let largest = 0;

it('every body up to the body limit: a 413 or 422 of at most 64 KiB within 100 ms', async () => {
  const rows: string[] = [];
  for (const flood of floods()) {
    expect(flood.body.length, flood.name).toBeLessThanOrEqual(BODY_LIMIT);
    await send(flood); // warm-up
    const times: number[] = [];
    let status = 0;
    const cpuBefore = await cpuMs(api.pid);
    for (let round = 0; round < REPEATS; round++) {
      const answer = await send(flood);
      expect(REFUSED, flood.name).toContain(answer.status);
      status = answer.status;
      expect(answer.bytes, flood.name).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
      largest = Math.max(largest, answer.bytes);
      times.push(answer.ms);
    }
    const cpuPerRequest = ((await cpuMs(api.pid)) - cpuBefore) / REPEATS;
    times.sort((a, b) => a - b);
    const p50 = percentile(times, 50);
    if (p50 > slowest.ms) slowest = { name: flood.name, ms: p50 };
    rows.push(
      `${flood.name} (${Math.round(flood.body.length / 1024)} KiB): ${status}, median ${p50.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms, ${cpuPerRequest.toFixed(1)} ms CPU`,
    );
  }
  console.log(`validation-flood, one at a time:\n  ${rows.join('\n  ')}`);
  figures.push(`slowest body median ${slowest.ms.toFixed(0)} ms (${slowest.name}), largest problem ${largest} B`);
  // The median, not the worst: on a shared machine one send can wait behind another process.
  // Times are targets of the full run on a quiet machine; CI (a shared machine) reports them.
  if (FULL) expect(slowest.ms, slowest.name).toBeLessThanOrEqual(MAX_ANSWER_MS);
});

it(`${CLIENTS} clients flooding those bodies: /health p99 within 50 ms, RSS growth within 64 MB`, async () => {
  const bodies = floods();
  let sent = 0;
  let answered = 0;
  const statuses = new Map<number, number>();
  /** Twelve clients sending the bodies round-robin until `ms` have passed. */
  const flood = (ms: number) => {
    const until = Date.now() + ms;
    return Array.from({ length: CLIENTS }, async (_, client) => {
      for (let round = client; Date.now() < until; round++) {
        const body = bodies[round % bodies.length]!;
        const answer = await send(body);
        sent += body.body.length;
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        largest = Math.max(largest, answer.bytes);
        answered += 1;
      }
    });
  };
  // The growth measured is the flood's, not the heap's first expansion to its working size under load: the
  // baseline is taken after a warm-up second of the same flood (the idle process's size is printed too).
  const idle = (await rssBytes(api.pid))!;
  await Promise.all(flood(WARM_UP_MS));
  [sent, answered] = [0, 0];
  statuses.clear();
  const baseline = (await rssBytes(api.pid))!;
  let peak = baseline;
  const sampler = setInterval(() => void rssBytes(api.pid).then((rss) => (peak = Math.max(peak, rss ?? 0))), 50);
  const deadline = Date.now() + FLOOD_MS;
  const clients = flood(FLOOD_MS);
  const health: number[] = [];
  const probe = (async () => {
    while (Date.now() < deadline) {
      const started = performance.now();
      const response = await request(`${api.baseUrl}/health`, { dispatcher: agent });
      await response.body.dump();
      health.push(performance.now() - started);
      expect(response.statusCode).toBe(200);
      await sleep(20);
    }
  })();
  await Promise.all([...clients, probe]);
  clearInterval(sampler);
  const growth = peak - baseline;

  health.sort((a, b) => a - b);
  const p50 = percentile(health, 50);
  const p99 = percentile(health, 99);
  figures.push(
    `${CLIENTS} clients × ${FLOOD_MS / 1000} s: ${answered} refusals (${[...statuses].map(([status, count]) => `${count} × ${status}`).join(', ')}; ${Math.round(sent / 1024 / 1024)} MiB sent), ` +
      `/health p50 ${p50.toFixed(1)} ms p99 ${p99.toFixed(1)} ms max ${health.at(-1)!.toFixed(1)} ms over ${health.length} probes, ` +
      `RSS +${Math.round(growth / 1024 / 1024)} MiB after a ${WARM_UP_MS / 1000} s warm-up (peak ${Math.round(peak / 1024 / 1024)} MiB, idle ${Math.round(idle / 1024 / 1024)} MiB)`,
  );
  // Reported before the targets are checked, so that a miss still shows its figures.
  reportFigure('validation-flood', figures.join('; '));
  expect([...statuses.keys()].filter((status) => !REFUSED.includes(status))).toEqual([]);
  expect(largest).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
  if (FULL) expect(p99, '/health p99').toBeLessThanOrEqual(MAX_HEALTH_P99_MS);
  expect(growth, 'RSS growth').toBeLessThanOrEqual(MAX_RSS_GROWTH);
});
