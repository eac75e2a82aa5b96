/**
 * Builds the service into dist/: esbuild bundles each entry point (the server, `migrate`, `openapi`, the
 * template maker) with its dependencies into a few JavaScript files, then dist/db/embedded-template-cli.js
 * makes the embedded database's migrated template (dist/pglite-template; skipped when migrations and
 * PGlite are unchanged). A bundle, not a file per module: a start then loads a handful of files instead of
 * about 1,200 modules, which cost half a second of resolving and compiling. Types are checked by
 * `npm run typecheck` (and CI), not here: a build takes about a second.
 *
 *   node scripts/build.mjs              build now (`npm run build`)
 *   node scripts/build.mjs --if-stale   build only when the build is missing or older than a source
 *                                       (`prepare` at install, `prestart`, `premigrate`, `preopenapi`)
 *
 * The staleness check is what every `npm start` pays, so it only compares modification times: the newest
 * file under src/ (and tsconfig.json, this script and npm's record of node_modules, since dependencies are
 * bundled) against dist/.build-stamp, whose time is the start of the last successful build (a source saved
 * during a build makes the next start build again). Plain JavaScript: it runs before anything is built,
 * and with `npm ci --omit=dev` (no esbuild) it keeps an existing build rather than failing the install.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const ROOT = path.resolve(import.meta.dirname, '..');
const DIST = path.join(ROOT, 'dist');
const STAMP = path.join(DIST, '.build-stamp');
const LOCK = path.join(DIST, '.build-lock');
const TEMPLATE_MANIFEST = path.join(DIST, 'pglite-template.json');
/** What a build leaves in place: the template (rebuilt only when stale) and the lock. */
const KEPT = new Set(['pglite-template', 'pglite-template.json', '.build-lock']);
/** A lock older than this was left by a build that died: it is taken over. */
const LOCK_STALE_MS = 10 * 60_000;
const INPUTS = ['src', 'tsconfig.json', 'scripts/build.mjs', 'node_modules/.package-lock.json'];
const ENTRIES = ['src/server.ts', 'src/db/migrate-cli.ts', 'src/openapi-cli.ts', 'src/db/embedded-template-cli.ts'];
/**
 * Left to Node's resolution at run time: packages that find files of their own beside their code (PGlite
 * its WebAssembly, pino its worker, @fastify/swagger its package.json) and pg's optional native binding.
 */
const EXTERNAL = ['@electric-sql/pglite', 'pino', 'thread-stream', '@fastify/swagger', 'pg-native'];

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
    if (!fs.existsSync(full)) continue;
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

/** Why the build must run, or undefined when dist/ is current. */
function staleness() {
  const stamp = mtimeMs(STAMP);
  if (stamp === undefined) return 'no build yet';
  if (newestInput() > stamp) return 'sources changed since the last build';
  // An update of PGlite touches node_modules/.package-lock.json, and the template maker checks its version.
  if (!fs.existsSync(TEMPLATE_MANIFEST)) return 'no database template yet';
  return undefined;
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`build failed: node ${args.join(' ')} exited with ${result.status ?? result.signal}\n`);
    process.exit(1);
  }
}

async function build() {
  const startedAt = new Date();
  fs.rmSync(STAMP, { force: true });
  for (const entry of fs.readdirSync(DIST))
    if (!KEPT.has(entry)) fs.rmSync(path.join(DIST, entry), { recursive: true });
  const esbuild = await import('esbuild');
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outbase: 'src',
    outdir: 'dist',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    sourcemap: 'linked',
    chunkNames: 'chunks/[name]-[hash]',
    external: EXTERNAL.flatMap((name) => [name, `${name}/*`]),
    // CommonJS dependencies require Node's built-in modules: an ES module has no `require` of its own.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
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
    await action();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

function bundlerInstalled() {
  try {
    require.resolve('esbuild');
    return true;
  } catch {
    return false;
  }
}

const ifStale = process.argv.includes('--if-stale');
if (ifStale && staleness() === undefined) process.exit(0);
if (!bundlerInstalled()) {
  // A production install without devDependencies runs a build made beforehand (docs/deployment.md): the
  // install must not fail for want of a compiler; `npm run build` does.
  const kept = mtimeMs(STAMP) !== undefined ? 'keeping the existing dist/' : 'there is no build in dist/ either';
  process.stderr.write(`esbuild is not installed (npm ci --omit=dev?): ${kept}\n`);
  process.exit(ifStale ? 0 : 1);
}
await withLock(async () => {
  const reason = staleness();
  if (ifStale && reason === undefined) return;
  process.stderr.write(`building dist/ (${reason ?? 'asked for'})…\n`);
  const started = Date.now();
  await build();
  process.stderr.write(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
});
