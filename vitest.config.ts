import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** Test files that replace a module for themselves (vi.mock): each runs with modules of its own. */
const ISOLATED = 'tests/**/*.isolated.test.ts';

export default defineConfig({
  // The client package from its TypeScript sources (its exports' `@site-services/source` condition, also in
  // tsconfig.json): tests never run a stale build of it.
  // The rest is Vite's default for the server side.
  ssr: { resolve: { conditions: ['@site-services/source', 'module', 'node', 'development|production'] } },
  test: {
    globalSetup: ['tests/setup/global.ts'],
    pool: 'forks',
    // Deadlines catch a hang, never measure speed: a test or a set-up that waits on the machine (a server
    // start, a PGlite template) may take several times its idle duration under load and still pass.
    testTimeout: 120_000,
    hookTimeout: 240_000,
    // Each test file boots its own app on a database of its own (a copy of the migrated template, on PGlite
    // or PostgreSQL: tests/setup/global.ts), so files run in parallel without ordering.
    fileParallelism: true,
    // Vitest's default is one worker per core minus one: a single worker on the 2-core CI machine. The
    // files spend much of their time waiting (HTTP round trips, the database), so at least
    // two workers finish the suite markedly sooner there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: process.env.CI ? ['dot'] : ['default'],
    // Files share their worker's modules (no isolation): each file importing the application afresh cost
    // most of the suite's time (bench/results/history.md, session 8). Every file builds its own app on its
    // own database, so nothing else is shared. A file that replaces a module (vi.mock) would change it for
    // the files after it: it is named *.isolated.test.ts and runs in a fresh module graph.
    projects: [
      { extends: true, test: { name: 'shared', include: ['tests/**/*.test.ts'], exclude: [ISOLATED], isolate: false } },
      { extends: true, test: { name: 'isolated', include: [ISOLATED] } },
    ],
  },
});
