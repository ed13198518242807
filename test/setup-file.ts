import { afterAll, afterEach, beforeEach } from 'vitest';
import { beginTestTables, deleteTestTables } from './support/store.js';

/**
 * Runs in every test file before its own code (vitest `setupFiles`): points the file at its worker's
 * DynamoDB Local, and registers its hooks first:
 * its `beforeEach` runs before the file's own (tables made from then on belong to the test), and, hooks
 * running as a stack, its `afterEach` and `afterAll` after the file's own ones have stopped its services.
 * The tables a test made (in its body or its `beforeEach` hooks) are deleted after that test; the file's
 * other tables (made at load or in `beforeAll` hooks, shared by its tests) after the file.
 */
// This worker's own DynamoDB Local (test/global-setup.ts starts one per worker): VITEST_POOL_ID is 1, 2, ...
const endpoints = (process.env.DYNAMODB_ENDPOINTS ?? '').split(' ').filter(Boolean);
if (endpoints.length > 1)
  process.env.DYNAMODB_ENDPOINT = endpoints[(Number(process.env.VITEST_POOL_ID ?? 1) - 1) % endpoints.length];

beforeEach(() => {
  beginTestTables();
});

afterEach(async () => {
  await deleteTestTables('test');
});

afterAll(async () => {
  await deleteTestTables('file');
});
