/**
 * Prints where a V8 CPU profile (node --cpu-prof) spent its time: self time by function and by package,
 * and the inclusive time of the service's own functions, so a profile can be read without a browser.
 * Percentages are of the busy samples (idle left out).
 *
 *   npx tsx bench/profile-summary.ts FILE [top] [--from=S] [--to=S]
 *
 * --from and --to keep the samples between these seconds after the profile started (leave out the
 * start-up, which compiles every module and schema).
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const seconds = (name: string) => {
  const value = args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  return value === undefined ? undefined : Number(value) * 1e6;
};
const [file, topText] = args.filter((arg) => !arg.startsWith('--'));
if (!file) throw new Error('usage: profile-summary.ts FILE [top] [--from=S] [--to=S]');
const top = Number(topText ?? 40);
const from = seconds('from') ?? 0;
const to = seconds('to') ?? Number.POSITIVE_INFINITY;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const selfMicros = new Map<number, number>();
let elapsed = 0;
for (const [index, id] of profile.samples.entries()) {
  const delta = profile.timeDeltas[index] ?? 0;
  elapsed += delta;
  if (elapsed < from || elapsed > to) continue;
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
}
const idle = [...selfMicros].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)');
const idleMicros = idle.reduce((sum, [, micros]) => sum + micros, 0);
for (const [id] of idle) selfMicros.delete(id);
const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);

function packageOf(url: string): string {
  if (!url) return '(native/vm)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  // The compiled service (dist/), or its sources run through tsx (bench/micro.ts).
  const own = /\/(?:dist|src)\/(.*)$/.exec(url);
  return own ? `service ${own[1]}` : url;
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const frame = byId.get(id)!.callFrame;
  const name = `${frame.functionName || '(anonymous)'} ${packageOf(frame.url)}:${frame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  const pkg = packageOf(frame.url).replace(/^service .*/, 'service');
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
}
const print = (title: string, entries: Map<string, number>, count: number) => {
  console.log(`\n${title}`);
  for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    console.log(
      `${((micros / total) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`,
    );
  }
};
/** Inclusive time of the service's functions: each sample counts once for every distinct frame on its stack. */
const inclusive = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const seen = new Set<string>();
  for (let node: number | undefined = id; node !== undefined; node = parentOf.get(node)) {
    const frame = byId.get(node)!.callFrame;
    if (!packageOf(frame.url).startsWith('service ')) continue;
    const name = `${frame.functionName || '(anonymous)'} ${packageOf(frame.url)}:${frame.lineNumber + 1}`;
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
  }
}
console.log(`busy: ${(total / 1000).toFixed(0)} ms (idle ${(idleMicros / 1000).toFixed(0)} ms left out)`);
print('Self time by package', byPackage, 25);
print('Self time by function', byFunction, top);
print("Inclusive time of the service's functions", inclusive, top);
