/**
 * The integrator's method (issue 19): the service as an integrator's harness starts it (one process,
 * ROLE=all, no WEB_CONCURRENCY, PostgreSQL, LOG_LEVEL=warn, the rate limit raised), driven by wrk with
 * 16 connections and 2 threads after a warm-up; every figure a ratio to a baseline measured in the same
 * run, right before it:
 *   B2       bare Fastify serving the same site document (no auth, no database)
 *   B2-list  the same serving the same page of 100 sites
 *   B1w      pgbench's one-row insert transaction (BEGIN; INSERT of about 400 B; COMMIT), 16 clients
 * Visit creates (one active subscription: an event and a delivery each, delivered by the same process)
 * are compared with the site creates of the same run; the webhook's latency is measured at 50 creates a
 * second from the create's response to the receiver's answer.
 *
 * With `rounds` > 1 the baseline and the service alternate, round by round, so that a machine whose load
 * changes meanwhile weighs on both alike.
 */
import os from 'node:os';
import path from 'node:path';
import type { RunContext } from './lib/bench-context.js';
import { perfRound, removePerfNames } from './lib/perf-profile.js';
import { pgbench } from './lib/pgbench.js';
import { ask, forkHelper, startService } from './lib/processes.js';
import { startCpuCount, startIdleCount } from './lib/cpu.js';
import type { ScenarioResult } from './lib/report.js';
import {
  accessToken,
  apiCall,
  loadSites,
  provisionTenant,
  SITE_TEMPLATE,
  subscribeReceiver,
  visitBody,
} from './lib/setup.js';
import { summarise, type Summary } from './lib/stats.js';
import { webhookEndToEnd } from './lib/webhook-e2e.js';
import { wrk, type WrkSpec } from './lib/wrk.js';
import type { RoundResult } from './load.js';

export interface IntegratorContext extends RunContext {
  quick: boolean;
  rounds: number;
  /** Whether to measure a scenario: get, list, create, visits, webhook. */
  selected: (scenario: string) => boolean;
  rateLimitPerMinute: number;
  /** An on-CPU profile of the service's main thread in each round (bench/lib/perf-profile.ts). */
  perf: boolean;
}

export const WRK_CONNECTIONS = Number(process.env.BENCH_WRK_CONNECTIONS ?? 16);
/** For experiments (never the integrator's setting): variables added to the service's environment, as JSON. */
const SERVICE_ENV: Record<string, string> = JSON.parse(process.env.BENCH_SERVICE_ENV ?? '{}');
export const WRK_THREADS = 2;
const SITES = 10_000;
/** Ids of this phase's sites start past those of the other phases (ids are unique over all tenants). */
const SITE_OFFSET = 300_000_000;
const E2E_RATE = 50;
const MARKER = '@UNIQUE@';

/** A warm-up, then rounds of 10 s as the integrator's harness measures (shorter in a quick run). */
export function integratorTiming(quick: boolean): { warmupS: number; durationS: number } {
  return quick ? { warmupS: 1, durationS: 3 } : { warmupS: 3, durationS: 10 };
}

/** One measurement: a warm-up apart, then `rounds` rounds, each an alternative of its own. */
type Round = () => Promise<RoundResult>;

export async function integratorPhase(ctx: IntegratorContext): Promise<void> {
  const { database, keys, log } = ctx;
  const timing = integratorTiming(ctx.quick);
  const caFile = path.join(ctx.dataDir, 'receiver-ca-integrator.pem');
  const receiver = forkHelper('receiver.ts', [caFile]);
  const destination = `localhost:${await ask<number>(receiver, { type: 'port' })}`;
  const api = await startService(
    {
      DATABASE_URL: database.url,
      ENVIRONMENT: 'sandbox',
      ROLE: 'all',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: String(ctx.rateLimitPerMinute),
      TOKEN_TTL_SECONDS: '86400',
      DATA_DIR: ctx.dataDir,
      WEBHOOK_TEST_ALLOWED_DESTINATIONS: destination,
      NODE_EXTRA_CA_CERTS: caFile,
      ...keys,
      ...SERVICE_ENV,
    },
    { name: 'service (ROLE=all)', nodeArgs: ctx.nodeArgs },
  );
  log(`integrator method: service started (ROLE=all, one process, pid ${api.pid}); receiver on ${destination}`);
  ctx.notes.push(
    `Integrator method (wrk ${WRK_CONNECTIONS} connections, ${WRK_THREADS} threads): the service runs as one process with ROLE=all ` +
      `(its delivery worker in the same process), ENVIRONMENT=sandbox with WEBHOOK_TEST_ALLOWED_DESTINATIONS=${destination} for the receiver, ` +
      'LOG_LEVEL=warn and the raised rate limit; the baselines are single processes too.',
  );
  if (Object.keys(SERVICE_ENV).length > 0)
    ctx.notes.push(`An experiment: the service also ran with ${JSON.stringify(SERVICE_ENV)} (BENCH_SERVICE_ENV).`);

  const tenant = await provisionTenant(api.baseUrl, keys.ADMIN_TOKEN, 'Integrator tenant');
  const token = await accessToken(api.baseUrl, tenant);
  const auth = { authorization: `Bearer ${token}` };
  log(`integrator method: loading ${SITES.toLocaleString('en-US')} sites`);
  await loadSites(database.pool, tenant.tenantId, SITES, SITE_OFFSET, 'WRK');
  await database.pool.query('create table if not exists bench_b1w (id text primary key, payload text not null)');
  const firstSite = `site_${String(SITE_OFFSET + 1).padStart(26, '0')}`;
  await ask(ctx.bare, {
    type: 'documents',
    documents: {
      site: await apiCall(api.baseUrl, 'GET', `/api/v1/sites/${firstSite}`, token),
      list: await apiCall(api.baseUrl, 'GET', '/api/v1/sites?page[size]=100', token),
    },
  });

  const load = (spec: Omit<WrkSpec, 'connections' | 'threads' | 'durationS'>): Round => {
    const full = { ...spec, connections: WRK_CONNECTIONS, threads: WRK_THREADS, durationS: timing.durationS };
    return async () => wrk(full);
  };
  const warm = (spec: Omit<WrkSpec, 'connections' | 'threads' | 'durationS'>) =>
    wrk({ ...spec, connections: WRK_CONNECTIONS, threads: WRK_THREADS, durationS: timing.warmupS });

  /** Warm-ups, then rounds of baseline and service alternating; the service's CPU counted over its rounds. */
  const measure = async (
    id: string,
    title: string,
    target: string,
    service: Round,
    /** Each measured in turn with the service's rounds, or (a Summary) taken as already measured in this run. */
    baselines: Record<string, Round | Summary>,
    check: (figures: Summary, ratios: Record<string, number>) => boolean,
  ) => {
    const loadAverage = os.loadavg();
    log(`${title}: ${Object.keys(baselines).join(', ')} and the service, ${ctx.rounds} round(s) each`);
    const serviceRounds: RoundResult[] = [];
    const baselineRounds: Record<string, RoundResult[]> = Object.fromEntries(
      Object.entries(baselines).map(([name, baseline]) => [
        name,
        typeof baseline === 'function' ? [] : baseline.rounds,
      ]),
    );
    let cpuMicros = { service: 0, database: 0 };
    const idleShares: number[] = [];
    for (let round = 0; round < ctx.rounds; round++) {
      for (const [name, baseline] of Object.entries(baselines))
        if (typeof baseline === 'function') baselineRounds[name]!.push(await baseline());
      const stop = await startCpuCount(api.pid, database.pool, database.name);
      const idle = await startIdleCount();
      const profiled = ctx.perf ? await perfRound(api.pid, ctx.dataDir, `${id}-${round + 1}`, title) : undefined;
      const result = await service();
      if (profiled) log(`${title}: on-CPU profile in ${await profiled()}`);
      idleShares.push(await idle());
      const cpu = await stop(1);
      cpuMicros = { service: cpuMicros.service + cpu.serviceUs, database: cpuMicros.database + cpu.databaseUs };
      serviceRounds.push(result);
    }
    const figures = summarise(serviceRounds);
    const summaries = Object.fromEntries(
      Object.entries(baselineRounds).map(([name, rounds]) => [name, summarise(rounds)]),
    );
    const ratios = Object.fromEntries(
      Object.entries(summaries).map(([name, summary]) => [name, figures.rps / summary.rps]),
    );
    const result: ScenarioResult = {
      id,
      title: `[wrk] ${title}`,
      kind: 'http',
      connections: WRK_CONNECTIONS,
      figures,
      cpu: { serviceUs: cpuMicros.service / figures.requests, databaseUs: cpuMicros.database / figures.requests },
      baselines: summaries,
      ratios,
      target,
      loadAverage: [loadAverage[0]!, os.loadavg()[0]!],
      machineIdle: idleShares.reduce((sum, share) => sum + share, 0) / idleShares.length,
      met: figures.failures === 0 && check(figures, ratios),
    };
    ctx.scenarios.push(result);
    return { figures };
  };

  const pgbenchB1w = async (durationS: number) =>
    (
      await pgbench({
        connection: { ...database.server, database: database.name },
        // One row of about 400 bytes (a 32-character key and 368 of payload) per transaction.
        script: `BEGIN;\nINSERT INTO bench_b1w (id, payload) VALUES (md5(random()::text || clock_timestamp()::text), repeat('x', 368));\nCOMMIT;\n`,
        clients: WRK_CONNECTIONS,
        threads: WRK_THREADS,
        durationS,
        warmupS: 0,
        rounds: 1,
      })
    )[0]!;

  // GET /api/v1/sites/{id}: random ids of the tenant's sites.
  const getSpec = {
    url: `${api.baseUrl}/api/v1/sites/x`,
    method: 'GET' as const,
    headers: auth,
    randomPath: { format: '/api/v1/sites/site_%026d', from: SITE_OFFSET + 1, to: SITE_OFFSET + SITES },
  };
  const b2Spec = { url: `${ctx.bareUrl}/bare/site`, method: 'GET' as const };
  if (ctx.selected('get')) {
    await warm(b2Spec);
    await warm(getSpec);
    await measure(
      'wrk-get-site',
      'GET /api/v1/sites/{id}',
      '≥ 0.35 × B2',
      load(getSpec),
      { B2: load(b2Spec) },
      (_figures, ratios) => ratios.B2! >= 0.35,
    );
  }

  // GET /api/v1/sites?page[size]=100
  const listSpec = { url: `${api.baseUrl}/api/v1/sites?page[size]=100`, method: 'GET' as const, headers: auth };
  const b2ListSpec = { url: `${ctx.bareUrl}/bare/sites`, method: 'GET' as const };
  if (ctx.selected('list')) {
    await warm(b2ListSpec);
    await warm(listSpec);
    await measure(
      'wrk-list-sites',
      'GET /api/v1/sites?page[size]=100',
      '≥ 0.5 × B2-list',
      load(listSpec),
      { 'B2-list': load(b2ListSpec) },
      (_figures, ratios) => ratios['B2-list']! >= 0.5,
    );
  }

  // POST /api/v1/sites with Idempotency-Key
  const siteSpec = {
    url: `${api.baseUrl}/api/v1/sites`,
    method: 'POST' as const,
    headers: auth,
    idempotencyKey: true,
    body: { json: JSON.stringify({ ...SITE_TEMPLATE, siteCode: `WRK-${MARKER}` }), marker: MARKER },
  };
  let siteCreates: Summary | undefined;
  if (ctx.selected('create')) {
    await pgbenchB1w(timing.warmupS);
    await warm(siteSpec);
    siteCreates = (
      await measure(
        'wrk-create-site',
        'POST /api/v1/sites with Idempotency-Key',
        '≥ 0.5 × B1w',
        load(siteSpec),
        { B1w: () => pgbenchB1w(timing.durationS) },
        (_figures, ratios) => ratios.B1w! >= 0.5,
      )
    ).figures;
  }

  // POST /api/v1/site-visits, one active subscription: each create queues an event and a delivery, which
  // this same process delivers meanwhile.
  await apiCall(api.baseUrl, 'POST', '/api/v1/sites', token, { ...SITE_TEMPLATE, siteCode: 'W-1' });
  const subscriptionId = await subscribeReceiver(api.baseUrl, token, destination, 'integrator');
  const visitSpec = {
    url: `${api.baseUrl}/api/v1/site-visits`,
    method: 'POST' as const,
    headers: auth,
    idempotencyKey: true,
    body: { json: JSON.stringify(visitBody(tenant, 'W-1', `WRK-${MARKER}`)), marker: MARKER },
  };
  if (ctx.selected('visits')) {
    await warm(visitSpec);
    await measure(
      'wrk-create-visit',
      'POST /api/v1/site-visits with Idempotency-Key, one active subscription',
      '≥ 0.4 × site creates',
      load(visitSpec),
      // The site creates measured above are this scenario's baseline.
      siteCreates ? { 'site creates': siteCreates } : {},
      (_figures, ratios) => (ratios['site creates'] ?? 0) >= 0.4,
    );
  }
  // What the creates queued is delivered before the latency is measured, then set aside.
  const drained = Date.now() + 120_000;
  const pending = async () =>
    Number(
      (
        await database.pool.query(
          "select count(*) from webhook_deliveries where subscription_id = $1 and status = 'pending'",
          [subscriptionId],
        )
      ).rows[0].count,
    );
  while ((await pending()) > 0 && Date.now() < drained) await new Promise((resolve) => setTimeout(resolve, 200));
  await database.pool.query('delete from webhook_deliveries where subscription_id = $1', [subscriptionId]);

  if (ctx.selected('webhook')) {
    log(`[wrk] webhook: ${E2E_RATE} creates/s, from the create's response to receipt`);
    const loadAverage = os.loadavg();
    const { e2e, failures } = await webhookEndToEnd({
      loader: ctx.loader,
      receiver,
      pool: database.pool,
      apiBaseUrl: api.baseUrl,
      token,
      visit: visitBody(tenant, 'W-1', 'E2E'),
      subscriptionId,
      rate: E2E_RATE,
      durationS: ctx.quick ? 6 : 20,
    });
    ctx.scenarios.push({
      id: 'wrk-webhook-e2e',
      title: `[wrk] Webhook at ${E2E_RATE} creates/s, create's response → receipt (ROLE=all)`,
      kind: 'e2e',
      target: 'p99 ≤ 25 ms from the response',
      e2e,
      loadAverage: [loadAverage[0]!, os.loadavg()[0]!],
      met: failures === 0 && e2e.fromResponse.p99 <= 25 && e2e.received === e2e.created && e2e.duplicates === 0,
    });
  }
  await api.stop();
  if (ctx.perf) removePerfNames(api.pid);
  receiver.kill('SIGTERM');
}
