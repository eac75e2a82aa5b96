import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/setup/global.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file boots its own app on its own database (PGlite) or on the shared test database
    // (PostgreSQL, isolated by tenant), so files run in parallel without ordering.
    fileParallelism: true,
    reporters: process.env.CI ? ['dot'] : ['default'],
  },
});
