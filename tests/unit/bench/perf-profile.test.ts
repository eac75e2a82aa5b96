/** The bench's on-CPU profile summary (bench/lib/perf-profile.ts): perf script's samples, attributed. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BundleModules, parseSamples, summarisePerf } from '../../../bench/lib/perf-profile.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'perf-summary-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
// The build's directory is named dist, and a frame names its file under it.
const dist = path.join(scratch, 'dist');
mkdirSync(path.join(dist, 'chunks'), { recursive: true });
// What esbuild writes: a marker line before each module's code.
writeFileSync(
  path.join(dist, 'chunks', 'chunk-A.js'),
  [
    '// node_modules/fastify/lib/reply.js',
    'function send() {}',
    '// src/http/auth.ts',
    'function bearerToken() {}',
  ].join('\n'),
);
writeFileSync(path.join(dist, 'server.js'), '// src/server.ts\nmain();\n');

const script = [
  // The regex of the auth module, under its JavaScript, under the event loop: attributed to src/http/auth.ts.
  '\t     ebe511 v8::internal::StringTable::LookupKey+0x21 (/usr/bin/node)',
  `\t7f00000001 JS:*'bearerToken file://${dist}/chunks/chunk-A.js:4:10 (/tmp/perf-1.map)`,
  `\t7f00000002 JS:*'send file://${dist}/chunks/chunk-A.js:2:1 (/tmp/perf-1.map)`,
  '\t     100000 uv_run+0x10 (/usr/bin/node)',
  '',
  '\tffffffff8226 _raw_spin_unlock_irqrestore+0x5 ([kernel.kallsyms])',
  `\t7f00000003 JS:*'writevGeneric node:internal/stream_base_commons:72:23 (/tmp/perf-1.map)`,
  `\t7f00000002 JS:*'send file://${dist}/chunks/chunk-A.js:2:1 (/tmp/perf-1.map)`,
  '',
  '\t     200000 v8::internal::Scavenger::ScavengeObject+0x1 (/usr/bin/node)',
  '',
].join('\n');

describe('the on-CPU profile summary', () => {
  it('reads perf script samples leaf first, without addresses and offsets', () => {
    const samples = parseSamples(script);
    expect(samples).toHaveLength(3);
    expect(samples[0]![0]).toBe('v8::internal::StringTable::LookupKey (/usr/bin/node)');
    expect(samples[2]).toEqual(['v8::internal::Scavenger::ScavengeObject (/usr/bin/node)']);
  });

  it('attributes a sample to the module of its first JavaScript frame from the leaf, and its leaf to a region', () => {
    const summary = summarisePerf(parseSamples(script), new BundleModules(dist), 'GET');
    expect(summary).toMatch(/^GET: 3 samples/);
    expect(summary).toMatch(/33\.3 % {2}src\/http\/auth\.ts/);
    expect(summary).toMatch(/33\.3 % {2}node: \(Node\.js\)/);
    expect(summary).toMatch(/33\.3 % {2}native only/);
    expect(summary).toMatch(/33\.3 % {2}kernel/);
    expect(summary).toMatch(/33\.3 % {2}V8 collector/);
    // Inclusive: `send` is on two of the three stacks.
    expect(summary).toMatch(/66\.7 % {2}JS:\*'send /);
  });
});
