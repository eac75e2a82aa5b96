/**
 * The embedded database (PGlite) in DATA_DIR/pgdata, and the migrated template it starts from.
 *
 * PGlite's own first initialisation (initdb in WASM) takes 4-5 s of CPU, and the migrations another
 * second; reopening a data directory takes a fraction of that. So the build makes a migrated data
 * directory once (dist/pglite-template, by embedded-template-cli.ts) and a first start copies it into
 * DATA_DIR: the copy is then opened like any restart, and only migrations newer than the template run.
 * The template is used only when it was made by the installed PGlite and holds no migration this code
 * does not know; otherwise (a stale or missing build, or running from sources) PGlite initialises the
 * directory itself as before, only slower.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PACKAGE_ROOT } from '../lib/package-root.js';
import { migrations } from './migrations/index.js';

const DIST = path.join(PACKAGE_ROOT, 'dist');
export const TEMPLATE_DIR = path.join(DIST, 'pglite-template');
export const TEMPLATE_MANIFEST = path.join(DIST, 'pglite-template.json');

/**
 * PGlite's start-up parameters plus a smaller buffer cache: PostgreSQL zeroes its shared buffers when it
 * starts, which at initdb's 128 MB took about 0.4 s of every start here; 32 MB costs a quarter of that
 * and still holds a sandbox's working set (reads past it come from the operating system's file cache).
 */
export const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'];

export interface TemplateManifest {
  /** The PGlite version that made the directory (its on-disk format is that version's). */
  pglite: string;
  /** The migrations applied to it, in order. */
  migrations: string[];
  /** A hash of the migrations' sources, so that an edited migration makes the template again. */
  fingerprint: string;
}

/** How a data directory was opened, for the start-up's progress lines. */
export type EmbeddedOrigin = 'existing' | 'template' | 'initialised';

export function installedPgliteVersion(): string {
  const require = createRequire(import.meta.url);
  let directory = path.dirname(require.resolve('@electric-sql/pglite'));
  for (;;) {
    const file = path.join(directory, 'package.json');
    if (fs.existsSync(file)) {
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version: string };
      if (manifest.name === '@electric-sql/pglite') return manifest.version;
    }
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error('cannot find the version of @electric-sql/pglite');
    directory = parent;
  }
}

/** A hash of the migrations' sources (the template is made at build time, beside them). */
export function migrationsFingerprint(): string {
  const directory = path.join(PACKAGE_ROOT, 'src', 'db', 'migrations');
  const hash = createHash('sha256');
  for (const name of fs.readdirSync(directory).sort()) {
    if (/\.(js|ts)$/.test(name)) hash.update(name).update(fs.readFileSync(path.join(directory, name)));
  }
  return hash.digest('hex');
}

export function readTemplateManifest(): TemplateManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(TEMPLATE_MANIFEST, 'utf8')) as TemplateManifest;
  } catch {
    return undefined;
  }
}

/** The template can seed a new data directory: same PGlite, and only migrations this code knows. */
export function templateUsable(manifest = readTemplateManifest()): manifest is TemplateManifest {
  if (!manifest || !fs.existsSync(path.join(TEMPLATE_DIR, 'PG_VERSION'))) return false;
  const known = Object.keys(migrations);
  return (
    manifest.pglite === installedPgliteVersion() && manifest.migrations.every((name, index) => known[index] === name)
  );
}

/** Files in flight while copying the template: enough to keep libuv's thread pool (4 threads) busy. */
const COPY_CONCURRENCY = 8;

/**
 * Copies a directory tree several files at a time: each file costs a few system calls whose latency,
 * not bandwidth, is the price (the template is about 400 files, most of them small).
 */
async function copyTree(from: string, to: string): Promise<void> {
  const files: string[] = [];
  const directories = [to];
  for (const entry of fs.readdirSync(from, { recursive: true, withFileTypes: true })) {
    const relative = path.relative(from, path.join(entry.parentPath, entry.name));
    if (entry.isDirectory()) directories.push(path.join(to, relative));
    else files.push(relative);
  }
  for (const directory of directories) fs.mkdirSync(directory, { recursive: true });
  let next = 0;
  const copyRest = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      await fs.promises.copyFile(path.join(from, file), path.join(to, file));
    }
  };
  await Promise.all(Array.from({ length: COPY_CONCURRENCY }, copyRest));
}

/**
 * Makes sure DATA_DIR/pgdata holds a database to open: an existing one is left alone; a missing (or
 * empty, after a start that died) one becomes a copy of the template, made beside it and renamed into
 * place so that a start killed during the copy leaves nothing half-made.
 */
export async function prepareDataDirectory(dataDir: string): Promise<{ directory: string; origin: EmbeddedOrigin }> {
  const directory = path.join(dataDir, 'pgdata');
  if (fs.existsSync(path.join(directory, 'PG_VERSION'))) return { directory, origin: 'existing' };
  fs.mkdirSync(dataDir, { recursive: true });
  if (!templateUsable()) {
    fs.mkdirSync(directory, { recursive: true });
    return { directory, origin: 'initialised' };
  }
  const staging = `${directory}.copying-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  await copyTree(TEMPLATE_DIR, staging);
  fs.rmSync(directory, { recursive: true, force: true });
  fs.renameSync(staging, directory);
  return { directory, origin: 'template' };
}
