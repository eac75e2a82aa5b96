import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The client package from its TypeScript sources (its exports' `@site-services/source` condition, also in
  // tsconfig.json): tests never run a stale build of it.
  // The rest is Vite's default for the server side.
  ssr: { resolve: { conditions: ['@site-services/source', 'module', 'node', 'development|production'] } },
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/setup/global.ts'],
    pool: 'forks',
    // Deadlines catch a hang, never measure speed: a test or a set-up that waits on the machine (a server
    // start, a PGlite template, scrypt) may take several times its idle duration under load and still pass.
    testTimeout: 120_000,
    hookTimeout: 240_000,
    // Each test file boots its own app on a database of its own (a copy of the migrated template, on PGlite
    // or PostgreSQL: tests/setup/global.ts), so files run in parallel without ordering.
    fileParallelism: true,
    // Vitest's default is one worker per core minus one: a single worker on the 2-core CI machine. The
    // files spend much of their time waiting (scrypt in the thread pool, HTTP round trips), so at least
    // two workers finish the suite markedly sooner there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: process.env.CI ? ['dot'] : ['default'],
  },
});
