import { afterAll } from 'vitest';
import { deleteTestTables } from './support/store.js';

/**
 * Runs in every test file before its own code (vitest `setupFiles`): after the file, its DynamoDB Local
 * tables are deleted (`deleteTestTables`), after the file's own `afterAll` hooks (hooks run as a stack,
 * and this one is registered first) have stopped its services.
 */
afterAll(async () => {
  await deleteTestTables();
});
