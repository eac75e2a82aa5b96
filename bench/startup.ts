/**
 * `npm run bench -- startup [--rounds=N]`: how long the compiled service (`node dist/server.js`, as
 * `npm start` runs it) takes from its spawn to the first 200 from /ready, in the default sandbox:
 *
 * - first start: the embedded database (PGlite) in a fresh DATA_DIR (template copy, demo tenant);
 * - restart: the same DATA_DIR again;
 * - PostgreSQL: DATABASE_URL on a database that an earlier start migrated and provisioned;
 * - restart through `npm start`: the same as a restart plus npm and the build's staleness check.
 *
 * Each figure is the median of N rounds (default 5), with the process's CPU time at that moment (user +
 * system, from /proc), of its main thread and of all its threads: on a machine shared with other work the
 * wall time moves with the load, the CPU time far less, and the main thread's is about what an idle
 * machine's wall time would be (the start is one thread's work, plus some waiting on files). Prints a
 * table and writes bench/results/startup.json.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuMicros, mainThreadCpuMicros } from './lib/cpu.js';
import { freePort, ROOT, run, sleep, startService } from './lib/processes.js';
import { createBenchDatabase } from './lib/setup.js';
import { median } from './lib/stats.js';

interface Sample {
  wallMs: number;
  /** CPU of the whole process (every thread) and of its main thread, at ready. */
  cpuMs: number | undefined;
  mainThreadMs: number | undefined;
}

interface Scenario {
  id: string;
  title: string;
  targetMs: number | undefined;
  samples: Sample[];
}

const POLL_MS = 10;

/** One start of `node dist/server.js`: time to ready and CPU at that moment; then a graceful stop. */
async function startOnce(env: Record<string, string>, name: string): Promise<Sample> {
  const service = await startService({ LOG_LEVEL: 'warn', ...env }, { name, pollMs: POLL_MS });
  const [cpu, mainThread] = await Promise.all([cpuMicros([service.pid]), mainThreadCpuMicros(service.pid)]);
  await service.stop();
  return { wallMs: service.readyAfterMs, cpuMs: cpu.get(service.pid)! / 1000, mainThreadMs: mainThread / 1000 };
}

/** `npm start` in its own process group (npm, a shell, node), timed to ready, then stopped whole. */
async function npmStartOnce(env: Record<string, string>): Promise<Sample> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: 'ignore',
    detached: true,
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
      const ready = await fetch(`http://127.0.0.1:${port}/ready`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) break;
      await sleep(POLL_MS);
    }
    return { wallMs: performance.now() - started, cpuMs: undefined, mainThreadMs: undefined };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}

function summary(samples: Sample[]) {
  const walls = samples.map((sample) => sample.wallMs).sort((a, b) => a - b);
  const medianOf = (values: (number | undefined)[]) => {
    const known = values.filter((value) => value !== undefined);
    return known.length ? median(known) : undefined;
  };
  return {
    wall: median(walls),
    min: walls[0] ?? NaN,
    max: walls.at(-1) ?? NaN,
    cpu: medianOf(samples.map((sample) => sample.cpuMs)),
    mainThread: medianOf(samples.map((sample) => sample.mainThreadMs)),
  };
}

export async function startupBench(argv: string[]): Promise<void> {
  const rounds = Number(argv.find((arg) => arg.startsWith('--rounds='))?.slice(9) ?? 5);
  const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const loadAtStart = os.loadavg();
  process.stdout.write(
    `startup bench, ${rounds} rounds; load average ${loadAtStart.map((v) => v.toFixed(2)).join(' ')}\n`,
  );
  await run(process.execPath, ['scripts/build.mjs', '--if-stale']);
  const scenarios: Scenario[] = [
    { id: 'first-start', title: 'First start, embedded database (fresh DATA_DIR)', targetMs: 3000, samples: [] },
    { id: 'restart', title: 'Restart, embedded database', targetMs: 1500, samples: [] },
    { id: 'postgres', title: 'Start on PostgreSQL (migrated database)', targetMs: 1500, samples: [] },
    {
      id: 'npm-restart',
      title: 'Restart through `npm start` (npm + staleness check)',
      targetMs: undefined,
      samples: [],
    },
  ];
  const [first, restart, postgres, npmRestart] = scenarios as [Scenario, Scenario, Scenario, Scenario];
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'ss-startup-'));
  const database = await createBenchDatabase(serverUrl);
  try {
    // The database's first start (migrations are applied by createBenchDatabase; this one provisions).
    const postgresEnv = { DATABASE_URL: database.url, DATA_DIR: path.join(scratch, 'postgres') };
    await startOnce(postgresEnv, 'PostgreSQL first start');
    for (let round = 1; round <= rounds; round++) {
      const dataDir = path.join(scratch, `round-${round}`);
      first.samples.push(await startOnce({ DATA_DIR: dataDir }, 'first start'));
      restart.samples.push(await startOnce({ DATA_DIR: dataDir }, 'restart'));
      postgres.samples.push(await startOnce(postgresEnv, 'PostgreSQL start'));
      npmRestart.samples.push(await npmStartOnce({ DATA_DIR: dataDir }));
      const last = (scenario: Scenario) => scenario.samples.at(-1)!.wallMs.toFixed(0);
      process.stdout.write(
        `round ${round}: first ${last(first)} ms, restart ${last(restart)} ms, PostgreSQL ${last(postgres)} ms, npm start ${last(npmRestart)} ms (load ${os.loadavg()[0]!.toFixed(2)})\n`,
      );
    }
  } finally {
    await database.drop();
    rmSync(scratch, { recursive: true, force: true });
  }
  const loadAtEnd = os.loadavg();
  const rows = scenarios.map((scenario) => ({ ...scenario, ...summary(scenario.samples) }));
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const table = [
    line(['Scenario', 'to /ready (median)', 'min–max', 'CPU at ready: main thread / all', 'target']),
    line(['---', '---:', '---:', '---:', '---']),
    ...rows.map((row) =>
      line([
        row.title,
        `${row.wall.toFixed(0)} ms`,
        `${row.min.toFixed(0)}–${row.max.toFixed(0)} ms`,
        row.cpu === undefined ? '–' : `${row.mainThread?.toFixed(0)} / ${row.cpu.toFixed(0)} ms`,
        row.targetMs === undefined ? 'report' : `≤ ${row.targetMs} ms${row.wall <= row.targetMs ? ' (met)' : ''}`,
      ]),
    ),
  ].join('\n');
  const load = `load average ${loadAtStart.map((v) => v.toFixed(2)).join(' ')} at start, ${loadAtEnd.map((v) => v.toFixed(2)).join(' ')} at end`;
  process.stdout.write(`\n${table}\n\n${os.availableParallelism()} cores, ${load}\n`);
  const directory = path.join(ROOT, 'bench', 'results');
  mkdirSync(directory, { recursive: true });
  writeFileSync(
    path.join(directory, 'startup.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        rounds,
        machine: { cores: os.availableParallelism(), cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
        loadAverage: { start: loadAtStart, end: loadAtEnd },
        scenarios: rows.map(({ samples, ...row }) => ({ ...row, samples })),
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write('written: bench/results/startup.json\n');
}
