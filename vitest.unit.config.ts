import { defineConfig } from 'vitest/config';

/**
 * The unit tier (`npm run test:unit`): pure logic, no application and no database, in seconds.
 * `npm test` runs these files too, beside the tests that boot the application.
 */
export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts'],
    pool: 'threads',
    reporters: process.env.CI ? ['dot'] : ['default'],
  },
});
