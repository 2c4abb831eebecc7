import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Stops (and names) any musher a test left running in a temp home.
    globalSetup: ['tests/support/source-build.ts', 'tests/support/global-teardown.ts'],
  },
});
