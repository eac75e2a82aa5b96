import { defineConfig } from 'vitest/config';

/**
 * The unit tier (`npm run test:unit`): pure logic, no application and no database, in seconds.
 * `npm test` runs these files too, beside the tests that boot the application.
 */
export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts'],
    pool: 'threads',
    // A few unit files boot an in-memory PGlite (db/transaction.test.ts): its first query takes seconds on
    // a loaded machine, past vitest's 5-second default. A bound, not a schedule: nothing here waits on it.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['dot'] : ['default'],
  },
});
