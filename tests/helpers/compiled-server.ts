/**
 * The compiled service, as `npm start` runs it, for tests that start it as a process of its own: the
 * build (the same staleness check as `npm start`'s prestart script) and the command that runs it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** `node <this>` with the repository as working directory starts the service. */
export const SERVER_ENTRY = 'dist/server.js';

/** Builds dist/ unless it is current (one build at a time across test files: the script locks). */
export function ensureBuilt(): void {
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
}

/** A hook timeout for ensureBuilt: a build of dist/ and its database template takes a while when loaded. */
export const BUILD_LIMIT_MS = 300_000;
