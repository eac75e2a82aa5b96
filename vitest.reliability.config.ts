import { defineConfig } from 'vitest/config';

/**
 * The reliability and security suites (`npm run test:reliability`, docs/reliability.md): fault and
 * hostile-input scenarios against real PostgreSQL. Kept apart from `npm test` (their files end in `.rel.ts`,
 * outside the main include) because they start processes, cut connections and print figures.
 */
export default defineConfig({
  test: {
    include: ['tests/reliability/**/*.rel.ts'],
    globalSetup: ['tests/reliability/lib/global-setup.ts'],
    pool: 'forks',
    // One suite at a time: the fault suites kill processes and time outages, and must not compete with
    // each other for the two cores of the CI machine.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['dot'] : ['default'],
  },
});
