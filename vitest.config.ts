import { defineConfig } from 'vitest/config';

/**
 * One DynamoDB Local is started for the whole run (test/global-setup.ts) and its endpoint is
 * handed to the tests through DYNAMODB_ENDPOINT. Each test file uses its own table names and deletes them
 * afterwards (test/setup-file.ts). No test may
 * reach the internet: a runtime without its own integration settings (the environment's) sends Stripe and
 * Telegram calls to a closed loopback port, refused at once; tests that call them start loopback fakes.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup-file.ts'],
    // Generous: on a 2-core machine one DynamoDB Local (a full core) serves two workers, and a test that takes
    // 2 s alone can take 60 s or more late in a full run (races of 150-650 concurrent requests most of all).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    env: { STRIPE_API_BASE_URL: 'http://127.0.0.1:9', TELEGRAM_API_ROOT: 'http://127.0.0.1:9' },
  },
});
