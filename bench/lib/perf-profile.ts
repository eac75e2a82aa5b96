/**
 * An on-CPU profile of the service's main thread during the integrator's rounds (`npm run bench -- --wrk
 * --perf`): Linux `perf record` of that one thread while wrk drives it, summarised as text. The V8 profiler
 * (`--profile`) samples by the clock, so a socket write that wakes wrk or PostgreSQL on a 2-core machine shows
 * as time in `writev` while the woken process holds the core; perf counts only what ran on the CPU, the
 * kernel's share and V8's own (interning strings, megamorphic lookups, the collector) included, which is
 * what found the interned map keys of session 21 (bench/results/history.md).
 *
 * The service runs with `--perf-basic-prof`, so that perf names its JavaScript; a JavaScript frame is
 * attributed to the module of the bundle it is in (esbuild's `// src/...` and `// node_modules/...` markers).
 * Needs `perf` (Debian: linux-perf) and the right to trace the process (root, or perf_event_paranoid ≤ 1).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes.js';

/** Node options for a service to be profiled: names for its compiled JavaScript, V8's log out of the checkout. */
export function perfNodeArgs(dataDir: string): string[] {
  return ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${path.join(dataDir, 'v8.log')}`];
}

/** Fails early, with what to install, where perf is missing. */
export function assertPerfAvailable(): void {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('--perf needs Linux perf on PATH (Debian: apt-get install linux-perf)');
  }
}

/** One sample: its frames from the leaf up, each `symbol (dso)` as perf script writes it. */
type Sample = string[];

/** Where each line of the bundle's files starts a module, for naming a JavaScript frame's owner. */
export class BundleModules {
  private readonly files = new Map<string, { line: number; module: string }[]>();

  constructor(distDir: string) {
    const chunks = path.join(distDir, 'chunks');
    const files = [
      path.join(distDir, 'server.js'),
      ...(existsSync(chunks) ? readdirSync(chunks).map((name) => path.join(chunks, name)) : []),
    ];
    for (const file of files.filter((name) => name.endsWith('.js') && existsSync(name))) {
      const marks: { line: number; module: string }[] = [];
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((text, index) => {
          const marker = /^\/\/ (src\/[^/]+(?:\/[^/]+)?|node_modules\/(?:@[^/]+\/)?[^/]+)/.exec(text);
          if (marker) marks.push({ line: index + 1, module: marker[1]!.replace(/^node_modules\//, '') });
        });
      this.files.set(path.basename(file), marks);
    }
  }

  /** The module a JavaScript frame's code is in, `node:` for Node's own, or undefined for native code. */
  ownerOf(frame: string): string | undefined {
    const inBundle = /dist\/(?:chunks\/)?([^/:]+\.js):(\d+)/.exec(frame);
    if (!inBundle) return /JS:.* node:/.test(frame) ? 'node: (Node.js)' : undefined;
    const marks = this.files.get(inBundle[1]!) ?? [];
    const line = Number(inBundle[2]);
    let owner = '?';
    for (const mark of marks) {
      if (mark.line > line) break;
      owner = mark.module;
    }
    return owner;
  }
}

/** A frame of perf script's text, `address symbol+offset (dso)`, as `symbol (dso)`. */
const frameOf = (line: string) =>
  line
    .trim()
    .replace(/^[0-9a-f]+ /, '')
    .replace(/\+0x[0-9a-f]+/, '');

/** perf script's text: samples separated by blank lines, a frame a line from the leaf up. */
export function parseSamples(text: string): Sample[] {
  return text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .map(frameOf)
        .filter((frame) => frame.length > 0),
    )
    .filter((frames) => frames.length > 0);
}

/** A JavaScript frame's function name (`JS:*'name file:…`), or where in the bundle an anonymous one is. */
function functionName(frame: string): string {
  const named = /JS:\S?'([^\s']+)/.exec(frame);
  if (named) return named[1]!;
  return `(anonymous, ${/([^/\s]+\.js:\d+)/.exec(frame)?.[1] ?? 'unknown'})`;
}

/** The region a leaf frame ran in. */
function regionOf(leaf: string): string {
  if (leaf.includes('[kernel')) return 'kernel';
  if (leaf.includes('JS:') || leaf.includes('RegExp') || leaf.includes('/perf-')) return 'JavaScript (compiled)';
  if (/Scavenger|MarkCompact|Sweeper|ConcurrentMarking|MarkingVisitor|Heap::/.test(leaf)) return 'V8 collector';
  if (leaf.includes('/node)') || leaf.includes('bin/node')) return 'V8 and Node.js native';
  return 'libraries (libc, OpenSSL, ...)';
}

const percent = (count: number, total: number) => `${((100 * count) / total).toFixed(1).padStart(5)} %`;

function table(title: string, counts: Map<string, number>, total: number, top: number): string {
  const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [`${title}`, ...rows.map(([name, count]) => `${percent(count, total)}  ${name.slice(0, 150)}`)].join('\n');
}

const add = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

/** The summary of one thread's samples: regions, leaf symbols, modules and inclusive JavaScript functions. */
export function summarisePerf(samples: Sample[], modules: BundleModules, heading: string): string {
  const regions = new Map<string, number>();
  const leaves = new Map<string, number>();
  const owners = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const ours = new Map<string, number>();
  for (const frames of samples) {
    add(regions, regionOf(frames[0]!));
    add(leaves, frames[0]!);
    add(owners, frames.map((frame) => modules.ownerOf(frame)).find((owner) => owner !== undefined) ?? 'native only');
    for (const frame of new Set(frames.filter((frame) => frame.includes('JS:')))) add(inclusive, frame);
    const own = frames.find((frame) => modules.ownerOf(frame)?.startsWith('src/'));
    if (own) add(ours, `${modules.ownerOf(own)} ${functionName(own)}`);
  }
  const total = samples.length;
  return [
    `${heading}: ${total} samples of the service's main thread`,
    table('\nWhere the leaf ran', regions, total, 10),
    table(
      '\nBy the first JavaScript frame from the leaf up (its module: the code that asked for the work)',
      owners,
      total,
      30,
    ),
    table('\nLeaf symbols', leaves, total, 40),
    table('\nJavaScript functions on the stack (inclusive)', inclusive, total, 40),
    table(
      '\nOur functions: the nearest frame of src/ from the leaf up (the work it asked for, libraries included)',
      ours,
      total,
      40,
    ),
  ].join('\n');
}

/** Starts recording the thread; the returned function stops it and writes the summary to `outputFile`. */
export async function startPerfProfile(
  pid: number,
  distDir: string,
  dataFile: string,
  outputFile: string,
  heading: string,
): Promise<() => Promise<string>> {
  const recorder: ChildProcess = spawn('perf', ['record', '-g', '-F', '999', '-t', String(pid), '-o', dataFile], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => recorder.once('exit', () => resolve()));
  return async () => {
    recorder.kill('SIGINT');
    await exited;
    const script = execFileSync('perf', ['script', '-i', dataFile, '-F', 'ip,sym,dso'], {
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString('utf8');
    rmSync(dataFile, { force: true });
    const summary = summarisePerf(parseSamples(script), new BundleModules(distDir), heading);
    writeFileSync(outputFile, `${summary}\n`);
    return summary;
  };
}

/**
 * `startPerfProfile` for one round of a scenario, its summary in bench/results/profiles/perf-<name>.txt (perf's
 * own data in the run's data directory, removed once read); the returned function stops it and answers the
 * summary's path.
 */
export async function perfRound(
  pid: number,
  dataDir: string,
  name: string,
  title: string,
): Promise<() => Promise<string>> {
  const profiles = path.join(ROOT, 'bench', 'results', 'profiles');
  mkdirSync(profiles, { recursive: true });
  const outputFile = path.join(profiles, `perf-${name}.txt`);
  const stop = await startPerfProfile(
    pid,
    path.join(ROOT, 'dist'),
    path.join(dataDir, `perf-${name}.data`),
    outputFile,
    title,
  );
  return async () => {
    await stop();
    return path.relative(ROOT, outputFile);
  };
}

/** Removes the names `--perf-basic-prof` wrote for a stopped process (`/tmp/perf-<pid>.map`, growing while it ran). */
export function removePerfNames(pid: number): void {
  rmSync(`/tmp/perf-${pid}.map`, { force: true });
}
