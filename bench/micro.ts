/**
 * The service's own JavaScript cost of one request, without sockets, the load generator or noise from
 * other processes: the real app (buildApp, production settings, PostgreSQL) answering `app.inject`
 * requests, 32 at a time, on a fresh bench database; prints CPU µs per request of this process (the
 * database's backends are elsewhere). For comparing changes to the request path at µs resolution, which
 * the socket benchmark (noise ±15 % on 2 cores) cannot.
 *
 *   npx tsx bench/micro.ts [get|create] [requests]     (BENCH_DATABASE_URL as for npm run bench)
 *   add --cpu-prof to write a V8 profile: node --import tsx --cpu-prof bench/micro.ts get
 */
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/db/database.js';
import { createLogger } from '../src/lib/logger.js';
import { generateServerKeys } from '../src/runtime/server-keys.js';
import { createBenchDatabase, generateKeys, loadedSiteId, loadSites } from './lib/setup.js';

const [scenario = 'get', countText = '60000'] = process.argv.slice(2);
const total = Number(countText);
const CONCURRENCY = 32;

const database = await createBenchDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const base = loadConfig({ ...generateKeys(), ENVIRONMENT: 'production', DATABASE_URL: database.url, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '10000000' });
const keys = generateServerKeys(base);
const appDatabase = openPostgres(database.url, 10);
const app = await buildApp(base, { database: appDatabase, keys, logger: createLogger(base) });
await app.ready();

const call = async (method: string, url: string, token: string, payload?: unknown, headers: Record<string, string> = {}) => {
  const response = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, ...headers }, ...(payload ? { payload: payload as object } : {}) });
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.json();
};
const tenant = await call('POST', '/admin/v1/tenants', keys.adminToken!, { name: 'micro' });
const token = (
  await app.inject({
    method: 'POST',
    url: '/api/v1/oauth/token',
    payload: { grant_type: 'client_credentials', client_id: tenant.data.credentials.client_id, client_secret: tenant.data.credentials.client_secret },
  })
).json().access_token as string;
await loadSites(database.pool, tenant.data.tenantId, 10_000, 0, 'MICRO');

let sent = 0;
/** Every create's own number, across the warm-up and the measured run. */
let created = 0;
const site = { name: 'Store', addressLine1: '1 Main Street', city: 'Springfield', stateRegion: 'IL', postalCode: '62701', country: 'US' };
const one = async (index: number) => {
  if (scenario === 'create') {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': `micro-${index}` },
      payload: { ...site, siteCode: `M-${index}` },
    });
    if (response.statusCode !== 201) throw new Error(response.body);
  } else {
    const response = await app.inject({ method: 'GET', url: `/api/v1/sites/${loadedSiteId(0, 1 + (index % 10_000))}`, headers: { authorization: `Bearer ${token}` } });
    if (response.statusCode !== 200) throw new Error(response.body);
  }
};
const runFor = async (count: number) => {
  sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < count) {
        const index = sent++;
        await one(scenario === 'create' ? created++ : index);
      }
    }),
  );
};
await runFor(Math.min(5_000, total)); // warm-up
const cpuBefore = process.cpuUsage();
const started = process.hrtime.bigint();
await runFor(total);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const cpu = process.cpuUsage(cpuBefore);
console.log(
  `${scenario}: ${total} requests in ${seconds.toFixed(2)} s (${Math.round(total / seconds)}/s); this process ${((cpu.user + cpu.system) / total).toFixed(1)} µs CPU per request (user ${(cpu.user / total).toFixed(1)}, system ${(cpu.system / total).toFixed(1)})`,
);
await app.close();
await appDatabase.close();
await database.drop();
