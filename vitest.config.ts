import { defineConfig } from 'vitest/config';

/**
 * One DynamoDB Local is started for the whole run (test/global-setup.ts) and its endpoint is
 * handed to the tests through DYNAMODB_ENDPOINT. Each test file uses its own table names.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
