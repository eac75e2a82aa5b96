/**
 * `npm run bench`: builds the service, starts it as separate OS processes in production-like mode on a
 * fresh PostgreSQL database, drives load from another process, measures the baselines in the same run
 * with the same connection counts, prints one table and writes bench/results/latest.{json,md}.
 *
 *   npm run bench                 the full run (about 8 minutes on 2 cores)
 *   npm run bench -- --quick      short rounds and smaller data (about 3 minutes), for trying changes
 *   npm run bench -- --wrk        the integrator's method alone (bench/integrator.ts: wrk, 16 connections,
 *                                 2 threads, one ROLE=all process; about 3 minutes), same as --only=wrk
 *   options: --web-concurrency=N (API processes for the HTTP scenarios, default 1), --pool-size=N
 *            (DATABASE_POOL_SIZE of each service process, default 10), --keep-db,
 *            --only=get,list,create,uploads,visits,webhooks,scale,wrk (comma-separated),
 *            --wrk-rounds=N (the integrator's method: baseline and service alternate N times, default 1),
 *            --wrk-only=get,list,create,visits,webhook (its scenarios; visits are compared with creates),
 *            --save-as=NAME (the run's file name under bench/results/runs/), --note="text" (printed in the results),
 *            --profile (every service process writes a V8 CPU profile to bench/results/profiles/;
 *            `npx tsx bench/profile-summary.ts FILE` prints where the time went),
 *            --perf (with --wrk: an on-CPU profile of the service's main thread in each round, by Linux perf,
 *            summarised in bench/results/profiles/perf-<scenario>-<round>.txt; bench/lib/perf-profile.ts)
 *
 *   npm run bench -- startup      start-up times instead (bench/startup.ts): first start, restart and
 *                                 PostgreSQL start of the compiled service, to /ready; --rounds=N
 * Every run is kept as bench/results/runs/<date>-<mode>.{json,md}; a run of every scenario also as
 * bench/results/latest.{json,md}, one of some (--only, --wrk) as latest-<scenarios>.{json,md}.
 *
 * PostgreSQL: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); the bench creates
 * a database named ss_bench_<time> on that server and drops it at the end.
 *
 * Experiments with the integrator's method (not its setting; the run's notes say so): BENCH_WRK_CONNECTIONS=N
 * (wrk's connections, default 16), BENCH_SERVICE_ENV='{"WEBHOOK_CONCURRENCY":"64"}' (added to the service's
 * environment).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { integratorPhase, integratorTiming, WRK_CONNECTIONS, WRK_THREADS } from './integrator.js';
import { type BenchContext, benchProfile, CONNECTIONS, type RunContext } from './lib/bench-context.js';
import { assertPerfAvailable, perfNodeArgs } from './lib/perf-profile.js';
import { pgbenchVersion } from './lib/pgbench.js';
import { ask, forkHelper, ROOT, run, stopAll } from './lib/processes.js';
import { type BenchResults, renderMarkdown, renderTable, type ScenarioResult } from './lib/report.js';
import { type BenchDatabase, createBenchDatabase, generateKeys } from './lib/setup.js';
import { wrkVersion } from './lib/wrk.js';
import { listScalePhase } from './phases/list-scale.js';
import { productionApiPhase } from './phases/production-api.js';
import { webhooksPhase } from './phases/webhooks.js';

// ---------------------------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const option = (name: string) => argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = flag('quick');
const only = flag('wrk') ? ['wrk'] : option('only')?.split(',');
const wants = (id: string) => !only || only.includes(id);
const webConcurrency = Number(option('web-concurrency') ?? 1);
const poolSize = Number(option('pool-size') ?? 10);

const PROFILE = benchProfile(quick);
const RATE_LIMIT = 10_000_000;

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const startedAt = new Date();
const loadAtStart = os.loadavg();
const log = (text: string) =>
  process.stdout.write(`[${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)} s] ${text}\n`);

// ---------------------------------------------------------------------------------------------
// Bench state

let database: BenchDatabase;
const keys = generateKeys();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ss-bench-data-'));
const scenarios: ScenarioResult[] = [];
const notes: string[] = [];

/** Node options of every service process: a CPU profile each with --profile, perf's names with --perf. */
const nodeArgs = [
  ...(flag('profile') ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench', 'results', 'profiles')}`] : []),
  ...(flag('perf') ? perfNodeArgs(dataDir) : []),
];
if (flag('perf')) assertPerfAvailable();

function serviceEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    ENVIRONMENT: 'production',
    ROLE: 'api',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    TOKEN_TTL_SECONDS: '86400',
    DATA_DIR: dataDir,
    WEB_CONCURRENCY: String(webConcurrency),
    DATABASE_POOL_SIZE: String(poolSize),
    ...keys,
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// Main

async function versions(): Promise<BenchResults['machine']> {
  const { rows } = await database.pool.query('show server_version');
  return {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
    postgres: rows[0].server_version,
    pgbench: await pgbenchVersion(),
    autocannon: (await import('autocannon/package.json', { with: { type: 'json' } })).default.version,
    ...(wants('wrk') ? { wrk: await wrkVersion() } : {}),
    platform: `${os.type()} ${os.release()}`,
  };
}

async function main(): Promise<void> {
  log(
    `site-services bench (${quick ? 'quick' : 'full'}); load average at start ${loadAtStart.map((value) => value.toFixed(2)).join(' ')}`,
  );
  log('building (npm run build)');
  await run('npm', ['run', 'build', '--silent']);
  database = await createBenchDatabase(serverUrl);
  log(`database ${database.name} created and migrated`);
  const loader = forkHelper('load.ts');
  const bare = forkHelper('bare-server.ts');
  const bareUrl = `http://127.0.0.1:${await ask<number>(bare, { type: 'port' })}`;
  const machine = await versions();
  const runContext: RunContext = { database, keys, loader, bare, bareUrl, dataDir, nodeArgs, log, scenarios, notes };
  const phaseContext: BenchContext = {
    ...runContext,
    profile: PROFILE,
    timing: { durationS: PROFILE.durationS, warmupS: PROFILE.warmupS, rounds: PROFILE.rounds },
    wants,
    webConcurrency,
    serviceEnv,
  };

  try {
    if (['get', 'list', 'create', 'uploads'].some(wants)) await productionApiPhase(phaseContext);
    if (['visits', 'webhooks'].some(wants)) await webhooksPhase(phaseContext);
    if (wants('scale')) await listScalePhase(phaseContext);
    if (wants('wrk'))
      await integratorPhase({
        ...runContext,
        quick,
        rounds: Number(option('wrk-rounds') ?? 1),
        selected: (scenario) => option('wrk-only')?.split(',').includes(scenario) ?? true,
        rateLimitPerMinute: RATE_LIMIT,
        perf: flag('perf'),
      });
  } finally {
    const loadAtEnd = os.loadavg();
    const results: BenchResults = {
      date: startedAt.toISOString(),
      mode: quick ? 'quick' : 'full',
      durationS: Math.round((Date.now() - startedAt.getTime()) / 1000),
      machine,
      loadAverage: { start: loadAtStart, end: loadAtEnd },
      settings: {
        connections: CONNECTIONS,
        rounds: PROFILE.rounds,
        roundSeconds: PROFILE.durationS,
        warmupSeconds: PROFILE.warmupS,
        webConcurrency,
        rateLimitPerMinute: RATE_LIMIT,
        databasePoolSize: poolSize,
        pgbench: `-M prepared -c ${CONNECTIONS} -j 2`,
        ...(wants('wrk')
          ? {
              integrator: `wrk -c ${WRK_CONNECTIONS} -t ${WRK_THREADS}, ${option('wrk-rounds') ?? 1} round(s) of ${integratorTiming(quick).durationS} s after a warm-up of ${integratorTiming(quick).warmupS} s, B1w pgbench -M prepared -c ${WRK_CONNECTIONS} -j ${WRK_THREADS}`,
            }
          : {}),
      },
      note: option('note'),
      notes,
      scenarios,
    };
    process.stdout.write(`\n${renderTable(results)}\n`);
    const directory = path.join(ROOT, 'bench', 'results');
    mkdirSync(path.join(directory, 'runs'), { recursive: true });
    if (scenarios.length > 0) {
      const json = `${JSON.stringify(results, null, 2)}\n`;
      const markdown = renderMarkdown(results);
      const runName =
        option('save-as') ??
        `${startedAt.toISOString().replace(/[:.]/g, '-')}-${results.mode}${only ? `-${only.join('+')}` : ''}`;
      const latest = only ? `latest-${only.join('+')}` : 'latest';
      for (const [file, text] of [
        [`runs/${runName}.json`, json],
        [`runs/${runName}.md`, markdown],
        [`${latest}.json`, json],
        [`${latest}.md`, markdown],
      ] as const)
        writeFileSync(path.join(directory, file), text);
      log(`written: bench/results/${latest}.{json,md} and bench/results/runs/${runName}.{json,md}`);
    }
  }
}

/** A mode before the options picks another bench: `npm run bench -- startup` (bench/startup.ts). */
const mode = argv[0] !== undefined && !argv[0].startsWith('--') ? argv[0] : undefined;
const benchmark = async () => {
  if (mode === undefined) return main();
  if (mode === 'startup') return (await import('./startup.js')).startupBench(argv.slice(1));
  throw new Error(`unknown bench mode ${mode} (known: startup)`);
};

benchmark()
  .catch((error) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    if (database && !flag('keep-db'))
      await database.drop().catch((error) => process.stderr.write(`could not drop ${database.name}: ${error}\n`));
    else if (database) await database.pool.end();
    rmSync(dataDir, { recursive: true, force: true });
    process.exit();
  });
