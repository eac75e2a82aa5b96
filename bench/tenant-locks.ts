/**
 * Hostile-tenant probe: one tenant's rename of a site with very many visits holds the site's row (and its
 * visits') for seconds, while that tenant's own visit creates on the site and patches of its visits wait for
 * them; how long does another tenant's create take meanwhile? Against the built service (`node dist/server.js`)
 * on a PostgreSQL database of its own (dropped at the end), the site's visits inserted with SQL.
 *
 *   npx tsx bench/tenant-locks.ts [visits] [concurrency]     (BENCH_DATABASE_URL: the server, default local)
 *
 * Prints the rename's time, the other tenant's create latencies before and during it, and what the renaming
 * tenant's own requests answered. Extra environment for the service: TENANT_LOCKS_ENV='{"NAME":"value"}'.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { startService, stopAll } from './lib/processes.js';
import {
  accessToken,
  apiCall,
  createBenchDatabase,
  generateKeys,
  provisionTenant,
  SITE_TEMPLATE,
  type Tenant,
  visitBody,
} from './lib/setup.js';

const [visitsText = '450000', concurrencyText = '30'] = process.argv.slice(2);
const VISITS = Number(visitsText);
const CONCURRENCY = Number(concurrencyText);
const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const siteBody = (siteCode: string) => ({ ...SITE_TEMPLATE, siteCode });

interface Timed {
  status: number;
  ms: number;
}

async function timed(url: string, init: RequestInit): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(url, init);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const summary = (samples: Timed[]) => {
  const ms = samples.map((sample) => sample.ms);
  const statuses: Record<number, number> = {};
  for (const sample of samples) statuses[sample.status] = (statuses[sample.status] ?? 0) + 1;
  return `${samples.length} requests, p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms, statuses ${JSON.stringify(statuses)}`;
};

const database = await createBenchDatabase(server);
try {
  const keys = generateKeys();
  const extra = JSON.parse(process.env.TENANT_LOCKS_ENV ?? '{}') as Record<string, string>;
  const service = await startService(
    {
      DATABASE_URL: database.url,
      ENVIRONMENT: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '10000000',
      SITE_CODE_VISIT_REWRITES_PER_MINUTE: '100000000',
      ...keys,
      ...extra,
    },
    { name: 'api' },
  );
  const base = service.baseUrl;
  const tokenOf = async (tenant: Tenant) => accessToken(base, tenant);
  const a = await provisionTenant(base, keys.ADMIN_TOKEN, 'Renaming tenant');
  const b = await provisionTenant(base, keys.ADMIN_TOKEN, 'Bystander tenant');
  const [tokenA, tokenB] = [await tokenOf(a), await tokenOf(b)];
  const site = await apiCall(base, 'POST', '/api/v1/sites', tokenA, siteBody('BIG-0'));
  const siteId: string = site.data.id;
  const first = await apiCall(base, 'POST', '/api/v1/site-visits', tokenA, visitBody(a, 'BIG-0', 'T-0'));
  const firstVisit: string = first.data.id;

  // The other visits as copies of the first, with their own ids and ticket numbers.
  const loadStarted = performance.now();
  const columns = (
    await database.pool.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_name = 'site_visits' and column_name not in ('id', 'seq', 'client_ticket_number')`,
    )
  ).rows.map((row) => row.column_name);
  await database.pool.query(
    `insert into site_visits (id, client_ticket_number, ${columns.join(', ')})
     select 'vis_' || lpad(n::text, 26, '0'), 'T-' || n, ${columns.join(', ')}
     from site_visits, generate_series(1, $2::int) n where id = $1`,
    [firstVisit, VISITS],
  );
  await database.pool.query('vacuum analyze site_visits');
  console.log(`loaded ${VISITS} visits in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

  const headers = (token: string, key?: string) => ({
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    ...(key ? { 'idempotency-key': key } : {}),
  });
  const bystanderCreate = () =>
    timed(`${base}/api/v1/sites`, {
      method: 'POST',
      headers: headers(tokenB, randomUUID()),
      body: JSON.stringify(siteBody(`B-${randomUUID().slice(0, 12)}`)),
    });

  // Before: the bystander's creates, one at a time, for 3 s.
  const before: Timed[] = [];
  for (const until = performance.now() + 3_000; performance.now() < until; ) before.push(await bystanderCreate());

  // During: the rename, the renaming tenant's own creates on the site and patches of its visits, and the
  // bystander's creates, one at a time, until the rename has answered.
  let renaming = true;
  const own: Timed[] = [];
  const during: Timed[] = [];
  const renameStarted = performance.now();
  const rename = timed(`${base}/api/v1/sites/${siteId}`, {
    method: 'PATCH',
    headers: headers(tokenA),
    body: JSON.stringify({ siteCode: 'BIG-1' }),
  }).finally(() => {
    renaming = false;
  });
  let ticket = 0;
  const ownLoop = async (index: number) => {
    while (renaming) {
      const create = index % 2 === 0;
      own.push(
        await (create
          ? timed(`${base}/api/v1/site-visits`, {
              method: 'POST',
              headers: headers(tokenA, randomUUID()),
              body: JSON.stringify(visitBody(a, 'BIG-0', `N-${++ticket}`)),
            })
          : timed(`${base}/api/v1/site-visits/${firstVisit}`, {
              method: 'PATCH',
              headers: headers(tokenA),
              body: JSON.stringify({ description: `Patched ${++ticket}` }),
            })),
      );
    }
  };
  // The renaming tenant's requests start once the rename holds its locks (a little after it was sent).
  await new Promise((resolve) => setTimeout(resolve, 300));
  const owners = Array.from({ length: CONCURRENCY }, (_, index) => ownLoop(index));
  const bystander = (async () => {
    while (renaming) during.push(await bystanderCreate());
  })();
  const renamed = await rename;
  const renameMs = performance.now() - renameStarted;
  await Promise.all([...owners, bystander]);

  console.log(
    `machine: ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  );
  console.log(`rename: ${renamed.status} in ${renameMs.toFixed(0)} ms (${VISITS + 1} visits)`);
  console.log(`bystander's creates before: ${summary(before)}`);
  console.log(`bystander's creates during: ${summary(during)}`);
  console.log(`renaming tenant's own (${CONCURRENCY} at once): ${summary(own)}`);
  await service.stop();
} finally {
  await stopAll();
  await database.drop();
}
