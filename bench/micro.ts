/**
 * The service's own JavaScript cost of one request, without sockets, the load generator or the other
 * processes' noise: the real app (buildApp, production settings, PostgreSQL) answering `app.inject`
 * requests, 32 at a time, on a fresh bench database; prints this process's CPU µs per request
 * (light-my-request adds its own share) and, apart, its database backends'. For comparing changes to
 * the request path more finely than the socket benchmark can on 2 shared cores.
 *
 *   npx tsx bench/micro.ts [get|list|create|visit|deliver] [requests]     (BENCH_DATABASE_URL as for npm run bench)
 *
 * list reads pages of 100 sites; visit creates site visits (with an Idempotency-Key) for a tenant with one
 * active webhook subscription, so each also queues an event and a delivery (no worker runs here); deliver
 * does the same with the delivery worker running in this process (ROLE=all) and the bench's HTTPS receiver
 * in a process of its own, and counts a visit's CPU until its delivery has been received and recorded.
 *   node --import tsx --cpu-prof bench/micro.ts get    (and a V8 profile of it)
 *   npx tsx bench/micro.ts get 200000 --interleave=40     (an experiment's variants a and b, alternating)
 *   MICRO_ENV='{"WEBHOOK_CONCURRENCY":"32"}' npx tsx bench/micro.ts deliver     (the app with other settings)
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/db/database.js';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createLogger } from '../src/lib/logger.js';
import { systemClock } from '../src/lib/clock.js';
import { DeliveryWorker } from '../src/modules/outbox/worker.js';
import { ask, forkHelper } from './lib/processes.js';
import { generateServerKeys } from '../src/runtime/server-keys.js';
import { startCpuCount } from './lib/cpu.js';
import {
  type BenchDatabase,
  createBenchDatabase,
  generateKeys,
  loadedSiteId,
  loadSites,
  type Tenant,
  visitBody,
} from './lib/setup.js';

const positional = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
const [scenario = 'get', countText = '60000'] = positional;
const total = Number(countText);
/** --interleave=BLOCKS: an experiment's two variants in alternate blocks of one process (below). */
const interleaved = Number(
  process.argv.find((argument) => argument.startsWith('--interleave='))?.slice('--interleave='.length) ?? 0,
);
const CONCURRENCY = 32;
/** Whether the deliveries are made (the deliver scenario), to the bench's receiver. */
const delivering = scenario === 'deliver';
/** The scenarios that create visits, for a tenant with a project, an item and a subscription. */
const visiting = scenario === 'visit' || delivering;
/** The visit scenario's subscription: never called (no worker runs there); the deliver scenario's receiver. */
let receiverProcess: ChildProcess | undefined;
let RECEIVER = 'localhost:9';
const receiverCa = path.join(os.tmpdir(), `micro-receiver-ca-${process.pid}.pem`);
if (delivering) {
  receiverProcess = forkHelper('receiver.ts', [receiverCa]);
  RECEIVER = `localhost:${await ask<number>(receiverProcess, { type: 'port' })}`;
}
const SITES = 10_000;
const siteTemplate = {
  name: 'Store',
  addressLine1: '1 Main Street',
  city: 'Springfield',
  stateRegion: 'IL',
  postalCode: '62701',
  country: 'US',
};

async function expectStatus(app: FastifyInstance, status: number, request: InjectOptions) {
  const response = await app.inject(request);
  if (response.statusCode !== status) throw new Error(`${response.statusCode} ${response.body}`);
  return response;
}

/** A tenant with a token, and the bench's 10,000 sites. */
async function provision(
  app: FastifyInstance,
  adminToken: string,
  database: Awaited<ReturnType<typeof createBenchDatabase>>,
): Promise<string> {
  const tenant = (
    await expectStatus(app, 201, {
      method: 'POST',
      url: '/admin/v1/tenants',
      headers: { authorization: `Bearer ${adminToken}` },
      payload: { name: 'micro' },
    })
  ).json();
  const { client_id, client_secret } = tenant.data.credentials;
  const token = (
    await expectStatus(app, 200, {
      method: 'POST',
      url: '/api/v1/oauth/token',
      payload: { grant_type: 'client_credentials', client_id, client_secret },
    })
  ).json();
  await loadSites(database.pool, tenant.data.tenantId, SITES, 0, 'MICRO');
  if (visiting) {
    const admin = { authorization: `Bearer ${adminToken}` };
    const tenantUrl = `/admin/v1/tenants/${tenant.data.tenantId}`;
    await expectStatus(app, 201, {
      method: 'POST',
      url: `${tenantUrl}/projects`,
      headers: admin,
      payload: { projectId: 1, projectName: 'Micro' },
    });
    await expectStatus(app, 201, {
      method: 'POST',
      url: `${tenantUrl}/items`,
      headers: admin,
      payload: { itemId: 1, itemName: 'Micro Kiosk' },
    });
    await expectStatus(app, 201, {
      method: 'POST',
      url: '/api/v1/webhook-subscriptions',
      headers: { authorization: `Bearer ${token.access_token}` },
      payload: {
        targetUrl: `https://${RECEIVER}/hooks`,
        eventTypes: ['ticket.created'],
        secret: 'micro secret 0123456789',
      },
    });
  }
  return token.access_token as string;
}

async function measure(app: FastifyInstance, token: string, database: BenchDatabase): Promise<void> {
  const authorization = `Bearer ${token}`;
  let creates = 0;
  const one = (index: number) => {
    switch (scenario) {
      case 'create':
        return expectStatus(app, 201, {
          method: 'POST',
          url: '/api/v1/sites',
          headers: { authorization, 'idempotency-key': `micro-${creates}` },
          payload: { ...siteTemplate, siteCode: `M-${creates++}` },
        });
      case 'visit':
      case 'deliver':
        return expectStatus(app, 201, {
          method: 'POST',
          url: '/api/v1/site-visits',
          headers: { authorization, 'idempotency-key': `micro-${creates}` },
          payload: {
            ...visitBody({ projectId: 1, itemName: 'Micro Kiosk' } as Tenant, 'MICRO-1', `V-${creates++}`),
          },
        });
      case 'list':
        return expectStatus(app, 200, {
          method: 'GET',
          url: '/api/v1/sites?page[size]=100',
          headers: { authorization },
        });
      default:
        return expectStatus(app, 200, {
          method: 'GET',
          url: `/api/v1/sites/${loadedSiteId(0, 1 + (index % SITES))}`,
          headers: { authorization },
        });
    }
  };
  let delivered = 0;
  const runFor = async (count: number) => {
    let sent = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (sent < count) await one(sent++);
      }),
    );
    // The deliver scenario's visits are done once the receiver has had each one's delivery and the
    // worker is idle (its outcomes recorded).
    if (delivering) {
      delivered += count;
      while ((await ask<number>(receiverProcess!, { type: 'count' })) < delivered)
        await new Promise((resolve) => setTimeout(resolve, 2));
      await worker!.idle();
    }
  };
  await runFor(Math.min(5_000, total)); // warm-up
  if (interleaved > 0) return measureInterleaved(runFor);
  const databaseCpu = await startCpuCount(process.pid, database.pool, database.name);
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  await runFor(total);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const { databaseUs } = await databaseCpu(total);
  const per = (micros: number) => (micros / total).toFixed(1);
  console.log(
    `${scenario}: ${total} requests in ${seconds.toFixed(2)} s (${Math.round(total / seconds)}/s); this process ${per(cpu.user + cpu.system)} µs CPU per request (user ${per(cpu.user)}, system ${per(cpu.system)}); its database's backends ${databaseUs.toFixed(1)} µs`,
  );
}

/**
 * An A/B of an experiment's patch that reads `globalThis.benchVariant` ('a' or 'b') on the request path:
 * `total` requests in `interleaved` blocks, the variants alternating (a b b a), so that the machine's drift in speed
 * (large on shared cores) falls on both alike. Prints each variant's CPU per request and their ratio.
 */
async function measureInterleaved(runFor: (count: number) => Promise<void>): Promise<void> {
  const block = Math.ceil(total / interleaved);
  const spent = { a: 0, b: 0 };
  const done = { a: 0, b: 0 };
  for (let index = 0; index < interleaved; index++) {
    // a b b a: neither variant always runs first in its pair.
    const variant = index % 4 === 0 || index % 4 === 3 ? 'a' : 'b';
    (globalThis as { benchVariant?: string }).benchVariant = variant;
    const before = process.cpuUsage();
    await runFor(block);
    const cpu = process.cpuUsage(before);
    spent[variant] += cpu.user + cpu.system;
    done[variant] += block;
  }
  const a = spent.a / done.a;
  const b = spent.b / done.b;
  console.log(
    `${scenario}, interleaved in ${interleaved} blocks: a ${a.toFixed(1)} µs, b ${b.toFixed(1)} µs CPU per request (b/a ${(b / a).toFixed(3)})`,
  );
}

let worker: DeliveryWorker | undefined;
const database = await createBenchDatabase(
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
);
try {
  const config = loadConfig({
    ...generateKeys(),
    // Sandbox for the visit scenario's subscription (a destination on this machine); the rest is alike.
    ...(visiting
      ? { ENVIRONMENT: 'sandbox', WEBHOOK_TEST_ALLOWED_DESTINATIONS: RECEIVER }
      : { ENVIRONMENT: 'production' }),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '10000000',
    // An experiment's settings, as BENCH_SERVICE_ENV gives them to the socket bench's service.
    ...(JSON.parse(process.env.MICRO_ENV ?? '{}') as Record<string, string>),
  });
  const keys = generateServerKeys(config);
  const appDatabase = openPostgres(database.url, 10);
  const logger = createLogger(config);
  const app = await buildApp(config, { database: appDatabase, keys, logger });
  if (delivering)
    worker = new DeliveryWorker({
      database: appDatabase,
      config: config.webhook,
      keys,
      logger,
      clock: systemClock,
      extraCa: [readFileSync(receiverCa, 'utf8')],
      listeners: { attempt: () => Promise.reject(new Error('no listeners here')), close: async () => {} },
    });
  try {
    await app.ready();
    await worker?.start();
    await measure(app, await provision(app, keys.adminToken!, database), database);
  } finally {
    await worker?.stop();
    await app.close();
    await appDatabase.close();
  }
} finally {
  receiverProcess?.kill('SIGTERM');
  rmSync(receiverCa, { force: true });
  await database.drop();
}
