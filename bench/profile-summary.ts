/**
 * Prints where a V8 CPU profile (node --cpu-prof) spent its time: self time by function and by package,
 * so a profile can be read without a browser. Usage: npx tsx bench/profile-summary.ts FILE [top]
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

const [file, topText] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts FILE [top]');
const top = Number(topText ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map<number, number>();
for (const [index, id] of profile.samples.entries()) {
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
}
const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);

function packageOf(url: string): string {
  if (!url) return '(native/vm)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? `service ${url.slice(dist + 6)}` : url;
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
console.log(`total sampled: ${(total / 1000).toFixed(0)} ms`);
print('Self time by package', byPackage, 25);
print('Self time by function', byFunction, top);
