/**
 * What the phases of `npm run bench` (bench/run.ts) share: the run's database and helper processes, its
 * settings, where its results go, and the comparison of a service scenario with its baselines.
 */
import type { ChildProcess } from 'node:child_process';
import type { HttpLoadSpec, RoundResult } from '../load.js';
import { startCpuCount } from './cpu.js';
import { pgbench } from './pgbench.js';
import { ask, type Service } from './processes.js';
import type { ScenarioResult } from './report.js';
import type { BenchDatabase, Keys } from './setup.js';
import { summarise, type Summary } from './stats.js';

/** What every phase of a run works with, the integrator's (bench/integrator.ts) too. */
export interface RunContext {
  database: BenchDatabase;
  keys: Keys;
  /** bench/load.ts, which drives the load from a process of its own. */
  loader: ChildProcess;
  /** bench/bare-server.ts, the bare Fastify baseline (B2), and its origin. */
  bare: ChildProcess;
  bareUrl: string;
  dataDir: string;
  /** Node options of every service process: a CPU profile each with --profile. */
  nodeArgs: string[];
  log: (text: string) => void;
  scenarios: ScenarioResult[];
  notes: string[];
}

/** The context of the phases of bench/phases/. */
export interface BenchContext extends RunContext {
  profile: BenchProfile;
  /** The rounds of an HTTP scenario: `profile`'s. */
  timing: { durationS: number; warmupS: number; rounds: number };
  /** Whether the run measures a scenario (--only). */
  wants: (id: string) => boolean;
  webConcurrency: number;
  /** The service's environment in production mode, `extra` added. */
  serviceEnv: (extra?: Record<string, string>) => Record<string, string>;
}

/** The sizes of a run: the full one or a quick one (--quick). */
export function benchProfile(quick: boolean) {
  return quick
    ? {
        durationS: 3,
        warmupS: 1,
        rounds: 1,
        sites: 10_000,
        bigTenant: 100_000,
        backlog1: 1_500,
        backlog2: 2_000,
        e2eS: 6,
        uploadRounds: 1,
        listDurationS: 3,
      }
    : {
        durationS: 8,
        warmupS: 3,
        rounds: 3,
        sites: 10_000,
        bigTenant: 1_000_000,
        backlog1: 5_000,
        backlog2: 8_000,
        e2eS: 20,
        uploadRounds: 3,
        listDurationS: 6,
      };
}

export type BenchProfile = ReturnType<typeof benchProfile>;

export const CONNECTIONS = 32;
/** Where the ids of each phase's loaded sites start (ids are unique over all tenants). */
export const SITE_OFFSETS = { main: 0, small: 100_000_000, big: 200_000_000 };

export const httpLoad = (ctx: BenchContext, spec: HttpLoadSpec) =>
  ask<RoundResult[]>(ctx.loader, { type: 'http', spec });

export const pgbenchRun = (ctx: BenchContext, script: string) =>
  pgbench({
    connection: { ...ctx.database.server, database: ctx.database.name },
    script,
    clients: CONNECTIONS,
    threads: 2,
    ...ctx.timing,
  });

export async function bareDocuments(ctx: BenchContext, documents: Record<string, unknown>) {
  await ask(ctx.bare, { type: 'documents', documents });
}

export function sqlText(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** A JSON document as a jsonb expression without colons (pgbench reads `:name` as a variable). */
export function sqlJson(value: unknown): string {
  return `convert_from(decode('${Buffer.from(JSON.stringify(value)).toString('base64')}', 'base64'), 'UTF8')::jsonb`;
}

/** Service, B1 (pgbench) and B2 (bare Fastify) for one HTTP scenario, in that order. */
export async function compare(
  ctx: BenchContext,
  api: Service,
  id: string,
  title: string,
  target: string,
  service: HttpLoadSpec,
  b1: string | undefined,
  b2: HttpLoadSpec,
  check: (figures: Summary, ratios: Record<string, number>) => boolean,
): Promise<ScenarioResult> {
  const { database, log } = ctx;
  log(`${title}: service`);
  // The warm-up apart, so that the CPU count covers the measured rounds only.
  if (service.warmupS > 0) await httpLoad(ctx, { ...service, rounds: 0 });
  const stopCpuCount = await startCpuCount(api.pid, database.pool, database.name);
  const figures = summarise(await httpLoad(ctx, { ...service, warmupS: 0 }));
  const cpu = await stopCpuCount(figures.requests);
  const baselines: Record<string, Summary> = {};
  if (b1) {
    log(`${title}: B1 pgbench`);
    baselines.B1 = summarise(await pgbenchRun(ctx, b1));
  }
  log(`${title}: B2 bare Fastify`);
  baselines.B2 = summarise(await httpLoad(ctx, b2));
  const ratios = Object.fromEntries(
    Object.entries(baselines).map(([name, baseline]) => [name, figures.rps / baseline.rps]),
  );
  const result: ScenarioResult = {
    id,
    title,
    connections: service.connections,
    kind: 'http',
    figures,
    cpu,
    baselines,
    ratios,
    target,
    met: check(figures, ratios),
  };
  ctx.scenarios.push(result);
  return result;
}
