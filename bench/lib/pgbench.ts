/**
 * B1, the database limit: pgbench running a scenario's own SQL against the bench database, with the same
 * number of clients as the scenario has HTTP connections. Latency percentiles come from pgbench's
 * per-transaction log (sampled), throughput from its summary.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RoundResult } from '../load.js';
import { run } from './processes.js';
import { percentile } from './stats.js';

export function pgbenchBinary(): string {
  const candidates = [
    '/usr/bin/pgbench',
    ...['17', '16', '15', '14', '13'].map((version) => `/usr/lib/postgresql/${version}/bin/pgbench`),
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found)
    throw new Error(
      'pgbench not found: install Debian package postgresql-contrib (or postgresql-client) for the B1 baselines',
    );
  return found;
}

export async function pgbenchVersion(): Promise<string> {
  return (await run(pgbenchBinary(), ['--version'])).trim();
}

export interface PgbenchSpec {
  connection: { host: string; port: number; user: string; database: string };
  script: string;
  clients: number;
  threads: number;
  durationS: number;
  warmupS: number;
  rounds: number;
}

async function once(spec: PgbenchSpec, durationS: number, log: boolean): Promise<RoundResult> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'ss-pgbench-'));
  try {
    const scriptFile = path.join(directory, 'script.sql');
    writeFileSync(scriptFile, spec.script);
    const { host, port, user, database } = spec.connection;
    const args = [
      '-h',
      host,
      '-p',
      String(port),
      '-U',
      user,
      '-n',
      '-M',
      'prepared',
      '-c',
      String(spec.clients),
      '-j',
      String(spec.threads),
      '-T',
      String(durationS),
      '-f',
      scriptFile,
    ];
    if (log) args.push('-l', '--sampling-rate=0.2', `--log-prefix=${path.join(directory, 'log')}`);
    args.push(database);
    const output = await run(pgbenchBinary(), args);
    const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1]);
    const processed = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? 0);
    const failed = Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0);
    if (!Number.isFinite(tps)) throw new Error(`pgbench output not understood:\n${output}`);
    const latencies: number[] = [];
    if (log) {
      for (const file of readdirSync(directory).filter((name) => name.startsWith('log'))) {
        for (const line of readFileSync(path.join(directory, file), 'utf8').split('\n')) {
          const microseconds = Number(line.split(' ')[2]);
          if (Number.isFinite(microseconds) && line) latencies.push(microseconds / 1000);
        }
      }
    }
    latencies.sort((a, b) => a - b);
    return {
      rps: tps,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? NaN,
      mean: latencies.reduce((sum, value) => sum + value, 0) / (latencies.length || 1),
      requests: processed,
      non2xx: 0,
      errors: failed,
      timeouts: 0,
      statusCodes: {},
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

export async function pgbench(spec: PgbenchSpec): Promise<RoundResult[]> {
  if (spec.warmupS > 0) await once(spec, spec.warmupS, false);
  const rounds: RoundResult[] = [];
  for (let round = 0; round < spec.rounds; round++) rounds.push(await once(spec, spec.durationS, true));
  return rounds;
}
