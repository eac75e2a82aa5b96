/**
 * `npm run test:reliability`: runs the reliability suites (vitest.reliability.config.ts), prints one
 * figure line per suite and, outside CI, writes them into docs/reliability.md between its figure markers
 * (with the date and whether the counts were the CI or the full ones). Exits with vitest's status.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DOC = path.join(ROOT, 'docs', 'reliability.md');
const START = '<!-- figures:start -->';
const END = '<!-- figures:end -->';
/** The order of the lines in the output and the document. */
const ORDER = [
  'concurrency',
  'worker-kill',
  'receiver-outage',
  'fairness',
  'database-outage',
  'database-locked',
  'database-silent',
  'ssrf',
  'jwt',
  'uploads',
  'file-names',
  'fuzz',
  'values',
  'isolation',
  'import-kill',
  'rate-limit',
  'validation-flood',
];

const figuresDir = mkdtempSync(path.join(os.tmpdir(), 'reliability-figures-'));
const started = Date.now();
const vitest = spawn(
  process.execPath,
  [
    path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--config',
    'vitest.reliability.config.ts',
    ...process.argv.slice(2),
  ],
  {
    cwd: ROOT,
    env: { ...process.env, RELIABILITY_FIGURES_DIR: figuresDir },
    stdio: 'inherit',
  },
);
const code = await new Promise<number>((resolve) =>
  vitest.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
);
const seconds = Math.round((Date.now() - started) / 1000);

const lines = readdirSync(figuresDir)
  .map((file) => ({
    suite: file.replace(/\.txt$/, ''),
    line: readFileSync(path.join(figuresDir, file), 'utf8').trim(),
  }))
  .sort((a, b) => (ORDER.indexOf(a.suite) + 1 || 99) - (ORDER.indexOf(b.suite) + 1 || 99))
  .map((entry) => entry.line);
rmSync(figuresDir, { recursive: true, force: true });

const mode = process.env.RELIABILITY_FULL === '1' ? 'full counts (RELIABILITY_FULL=1)' : 'CI counts';
console.log(`\n=== reliability figures (${mode}, ${seconds} s${code === 0 ? '' : ', FAILED'})`);
for (const line of lines) console.log(line);

if (!process.env.CI && process.argv.length === 2) {
  const document = readFileSync(DOC, 'utf8');
  const from = document.indexOf(START);
  const to = document.indexOf(END);
  if (from >= 0 && to > from) {
    const block = [
      START,
      `Last run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${mode}, ${seconds} s, ${code === 0 ? 'all suites passed' : 'FAILED'}.`,
      '',
      '```text',
      ...lines,
      '```',
      END,
    ].join('\n');
    writeFileSync(DOC, document.slice(0, from) + block + document.slice(to + END.length));
  }
}
process.exit(code);
