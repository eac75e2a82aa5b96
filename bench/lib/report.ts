/** The bench's results: their shape, the console table and the Markdown file. */
import type { CpuPerRequest } from './cpu.js';
import { fmt, ms, type Summary } from './stats.js';

interface Common {
  id: string;
  title: string;
  target: string;
  met: boolean;
  connections?: number;
  ratios?: Record<string, number>;
  /** The 1-minute load average when the scenario started and when it ended. */
  loadAverage?: [start: number, end: number];
  /** The machine's idle share (all cores, 0 to 1) while the service was measured. */
  machineIdle?: number;
}

export type ScenarioResult = Common &
  (
    | { kind: 'http'; figures: Summary; cpu?: CpuPerRequest; baselines: Record<string, Summary> }
    | {
        kind: 'uploads';
        upload: {
          mbPerS: number;
          rssBeforeMb: number;
          rssPeakMb: number;
          growthMb: number;
          statuses: Record<string, number>;
          p50Ms: number;
          maxMs: number;
          rounds: number;
        };
        baselineUpload: { name: string; mbPerS: number };
      }
    | {
        kind: 'e2e';
        e2e: {
          created: number;
          received: number;
          duplicates: number;
          p50: number;
          p99: number;
          max: number;
          /** From the arrival of the create's response (after its commit): a lower bound of commit → receipt. */
          fromResponse: { p50: number; p99: number; max: number; count: number };
          createP50?: number;
        };
      }
    | {
        kind: 'deliveries';
        deliveries: {
          workers: number;
          count: number;
          perS: number;
          seconds: number;
          duplicates: number;
          states: Record<string, number>;
        };
        baselineDeliveries: { name: string; perS: number };
      }
    | { kind: 'growth'; growth: { small: Summary; big: Summary; factor: number; smallCount: number; bigCount: number } }
  );

export interface BenchResults {
  date: string;
  mode: 'quick' | 'full';
  durationS: number;
  machine: {
    cores: number;
    cpu: string;
    memoryGb: number;
    node: string;
    postgres: string;
    pgbench: string;
    autocannon: string;
    wrk?: string;
    platform: string;
  };
  loadAverage: { start: number[]; end: number[] };
  settings: Record<string, string | number>;
  note: string | undefined;
  notes: string[];
  scenarios: ScenarioResult[];
}

const latency = (summary: Summary) => `p50 ${ms(summary.p50)} / p99 ${ms(summary.p99)} / max ${ms(summary.max)} ms`;

/** One row per scenario, its figure followed by the machine's load while it was measured. */
function rows(results: BenchResults): string[][] {
  return results.scenarios.map((scenario) => {
    const row = scenarioRow(scenario);
    if (scenario.loadAverage)
      row[1] += `; load average ${scenario.loadAverage.map((value) => value.toFixed(1)).join(' → ')}`;
    if (scenario.machineIdle !== undefined && Number.isFinite(scenario.machineIdle))
      row[1] += `; machine ${Math.round(scenario.machineIdle * 100)} % idle`;
    return row;
  });
}

/** What was measured, its baselines, the ratios, the target and the verdict. */
function scenarioRow(scenario: ScenarioResult): string[] {
  const ratios = Object.entries(scenario.ratios ?? {})
    .map(([name, ratio]) => `${ratio.toFixed(2)} × ${name}`)
    .join(', ');
  const verdict = scenario.met ? 'met' : 'NOT met';
  switch (scenario.kind) {
    case 'http': {
      const failures = scenario.figures.failures ? ` (${fmt(scenario.figures.failures)} failed)` : '';
      const baselines = Object.entries(scenario.baselines)
        .map(([name, baseline]) => `${name} ${fmt(baseline.rps)}/s (${latency(baseline)})`)
        .join('; ');
      const cpu = scenario.cpu
        ? `; CPU per request: service ${fmt(scenario.cpu.serviceUs)} µs, PostgreSQL ${fmt(scenario.cpu.databaseUs)} µs`
        : '';
      return [
        scenario.title,
        `${fmt(scenario.figures.rps)} req/s${failures}, ${latency(scenario.figures)}${cpu}`,
        baselines,
        ratios,
        scenario.target,
        verdict,
      ];
    }
    case 'uploads': {
      const u = scenario.upload;
      return [
        scenario.title,
        `${u.mbPerS.toFixed(1)} MiB/s, RSS +${u.growthMb.toFixed(1)} MB (${u.rssBeforeMb.toFixed(0)} → ${u.rssPeakMb.toFixed(0)} MB), upload p50 ${ms(u.p50Ms)} ms`,
        `${scenario.baselineUpload.name} ${scenario.baselineUpload.mbPerS.toFixed(1)} MiB/s`,
        ratios,
        scenario.target,
        verdict,
      ];
    }
    case 'e2e': {
      const e = scenario.e2e;
      const lower = e.fromResponse
        ? `; from the create's response: p50 ${ms(e.fromResponse.p50)} / p99 ${ms(e.fromResponse.p99)} / max ${ms(e.fromResponse.max)} ms (create p50 ${ms(e.createP50 ?? NaN)} ms)`
        : '';
      return [
        scenario.title,
        `from occurredAt: p50 ${ms(e.p50)} / p99 ${ms(e.p99)} / max ${ms(e.max)} ms${lower}; ${fmt(e.received)} of ${fmt(e.created)} received, ${e.duplicates} duplicates`,
        '–',
        '–',
        scenario.target,
        verdict,
      ];
    }
    case 'deliveries': {
      const d = scenario.deliveries;
      return [
        scenario.title,
        `${fmt(d.perS)} /s (${fmt(d.count)} in ${d.seconds.toFixed(1)} s, ${d.duplicates} duplicates)`,
        `${scenario.baselineDeliveries.name} ${fmt(scenario.baselineDeliveries.perS)} req/s`,
        ratios,
        scenario.target,
        verdict,
      ];
    }
    case 'growth': {
      const g = scenario.growth;
      return [
        scenario.title,
        `p50 ${ms(g.big.p50)} ms vs ${ms(g.small.p50)} ms (p99 ${ms(g.big.p99)} vs ${ms(g.small.p99)} ms)`,
        `${fmt(g.smallCount)} sites`,
        `${g.factor.toFixed(2)} ×`,
        scenario.target,
        verdict,
      ];
    }
    default:
      throw new Error(`unknown scenario kind: ${(scenario as { kind: string }).kind}`);
  }
}

const HEADERS = ['Scenario', 'Figure', 'Baselines', 'Ratio', 'Target', 'Verdict'];

function header(results: BenchResults): string[] {
  const m = results.machine;
  const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(' ');
  const quiet = results.loadAverage.start[0]! < 1;
  return [
    `Date: ${results.date} (${results.mode} run, ${results.durationS} s)`,
    `Machine: ${m.cores} cores (${m.cpu}), ${m.memoryGb} GB, ${m.platform}`,
    `Versions: Node ${m.node}, PostgreSQL ${m.postgres}, ${m.pgbench}, autocannon ${m.autocannon}${m.wrk ? `, wrk ${m.wrk}` : ''}`,
    `Load average at start: ${load(results.loadAverage.start)}${quiet ? ' (quiet machine)' : ' (NOISY: other work was running; figures are low and spread)'}; at end: ${load(results.loadAverage.end)}`,
    `Settings: ${Object.entries(results.settings)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ')}`,
    ...(results.note ? [`Note: ${results.note}`] : []),
  ];
}

export function renderTable(results: BenchResults): string {
  const table = [HEADERS, ...rows(results)];
  const widths = HEADERS.map((_, column) => Math.min(70, Math.max(...table.map((row) => row[column]!.length))));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ');
  return [
    ...header(results),
    '',
    line(HEADERS),
    widths.map((width) => '-'.repeat(width)).join('-+-'),
    ...rows(results).map(line),
    '',
    ...results.notes,
  ].join('\n');
}

export function renderMarkdown(results: BenchResults): string {
  const escapeCell = (cell: string) => cell.replace(/\|/g, '\\|');
  const details = results.scenarios
    .filter((scenario): scenario is Extract<ScenarioResult, { kind: 'http' }> => scenario.kind === 'http')
    .map((scenario) => {
      const lines = [
        `### ${scenario.title} (${scenario.connections} connections)`,
        '',
        '| Run | Round | req/s | p50 ms | p99 ms | max ms | failed |',
        '|---|---|---|---|---|---|---|',
      ];
      const add = (name: string, summary: Summary) =>
        summary.rounds.forEach((round, index) => {
          lines.push(
            `| ${name} | ${index + 1} | ${fmt(round.rps)} | ${ms(round.p50)} | ${ms(round.p99)} | ${ms(round.max)} | ${fmt(round.non2xx + round.errors + round.timeouts)} |`,
          );
        });
      add('service', scenario.figures);
      for (const [name, baseline] of Object.entries(scenario.baselines)) add(name, baseline);
      return lines.join('\n');
    });
  return [
    '# Benchmark results',
    '',
    "Written by `npm run bench` (bench/run.ts). B1 is pgbench running the scenario's SQL against the same tables (the database limit);",
    'B2 a bare Fastify route returning the same document (the framework limit); B3 the webhook receiver driven directly (the receiver limit).',
    "Throughput is the mean of the rounds; p50 the median of the rounds' p50; p99 and max the worst round's.",
    '',
    ...header(results).map((line) => `- ${line}`),
    '',
    `| ${HEADERS.join(' | ')} |`,
    `|${HEADERS.map(() => '---').join('|')}|`,
    ...rows(results).map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
    '',
    ...results.notes.map((note) => `- ${note}`),
    '',
    '## Rounds',
    '',
    details.join('\n\n'),
    '',
  ].join('\n');
}
