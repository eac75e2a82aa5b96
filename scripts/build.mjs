/**
 * Builds the service into dist/: the TypeScript compiled by tsc (incremental: what did not change is not
 * emitted again), then the embedded database's migrated template (dist/pglite-template, made by
 * dist/db/embedded-template-cli.js, which skips it when migrations and PGlite are unchanged).
 *
 *   node scripts/build.mjs              build now (`npm run build`)
 *   node scripts/build.mjs --if-stale   build only when the build is missing or older than a source
 *                                       (`prepare` at install, `prestart`, `premigrate`, `preopenapi`)
 *
 * The staleness check is what every `npm start` pays, so it only compares modification times: the newest
 * file under src/ (and the tsconfig files, and this script) against dist/.build-stamp, whose time is the
 * start of the last successful build (a source saved during a build makes the next start build again).
 * Plain JavaScript with no dependency: it runs before anything is compiled, and with `npm ci --omit=dev`
 * (no TypeScript) it keeps an existing build rather than failing the install.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const DIST = path.join(ROOT, 'dist');
const STAMP = path.join(DIST, '.build-stamp');
const LOCK = path.join(DIST, '.build-lock');
const TEMPLATE_MANIFEST = path.join(DIST, 'pglite-template.json');
/** A lock older than this was left by a build that died: it is taken over. */
const LOCK_STALE_MS = 10 * 60_000;
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'];

const require = createRequire(import.meta.url);

function mtimeMs(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The newest modification time among the inputs (files of a directory, recursively). */
function newestInput() {
  let newest = 0;
  for (const input of INPUTS) {
    const full = path.join(ROOT, input);
    const stat = fs.statSync(full);
    if (!stat.isDirectory()) {
      newest = Math.max(newest, stat.mtimeMs);
      continue;
    }
    for (const entry of fs.readdirSync(full, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return newest;
}

function pgliteVersion() {
  let directory = path.dirname(require.resolve('@electric-sql/pglite'));
  for (;;) {
    const file = path.join(directory, 'package.json');
    if (fs.existsSync(file)) {
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (manifest.name === '@electric-sql/pglite') return manifest.version;
    }
    const parent = path.dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

/** Why the build must run, or undefined when dist/ is current. */
function staleness() {
  const stamp = mtimeMs(STAMP);
  if (stamp === undefined) return 'no build yet';
  if (newestInput() > stamp) return 'sources changed since the last build';
  let template;
  try {
    template = JSON.parse(fs.readFileSync(TEMPLATE_MANIFEST, 'utf8'));
  } catch {
    return 'no database template yet';
  }
  if (template.pglite !== pgliteVersion()) return 'PGlite was updated since the last build';
  return undefined;
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`build failed: node ${args.join(' ')} exited with ${result.status ?? result.signal}\n`);
    process.exit(1);
  }
}

function build() {
  const startedAt = new Date();
  fs.rmSync(STAMP, { force: true });
  run([require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  run([path.join(DIST, 'db', 'embedded-template-cli.js')]);
  fs.writeFileSync(STAMP, `${startedAt.toISOString()}\n`);
  fs.utimesSync(STAMP, startedAt, startedAt);
}

/** One build at a time (test files and `npm start` may ask at once); the others wait and then re-check. */
async function withLock(action) {
  fs.mkdirSync(DIST, { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const since = mtimeMs(LOCK);
      if (since !== undefined && Date.now() - since > LOCK_STALE_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    action();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

function typescriptInstalled() {
  try {
    require.resolve('typescript/bin/tsc');
    return true;
  } catch {
    return false;
  }
}

const ifStale = process.argv.includes('--if-stale');
if (ifStale && staleness() === undefined) process.exit(0);
if (!typescriptInstalled()) {
  // A production install without devDependencies runs a build made beforehand (docs/deployment.md): the
  // install must not fail for want of a compiler; `npm run build` does.
  const kept = mtimeMs(STAMP) !== undefined ? 'keeping the existing dist/' : 'there is no build in dist/ either';
  process.stderr.write(`TypeScript is not installed (npm ci --omit=dev?): ${kept}\n`);
  process.exit(ifStale ? 0 : 1);
}
await withLock(() => {
  const reason = staleness();
  if (ifStale && reason === undefined) return;
  process.stderr.write(`building dist/ (${reason ?? 'asked for'})…\n`);
  const started = Date.now();
  build();
  process.stderr.write(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
});
