import { createServer } from 'node:net';
import { startDynamoDbLocal, type DynamoDbLocalHandle } from '../shared/store/dynamodb-local.js';

/**
 * Starts one DynamoDB Local for the whole test run on a free loopback port and exposes it as
 * DYNAMODB_ENDPOINT. Test files create their own uniquely named tables (test/support/store.ts).
 */
let handle: DynamoDbLocalHandle | undefined;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function setup(): Promise<void> {
  if (process.env.DYNAMODB_ENDPOINT) return;
  handle = await startDynamoDbLocal({ port: await freePort() });
  process.env.DYNAMODB_ENDPOINT = handle.endpoint;
}

export async function teardown(): Promise<void> {
  await handle?.stop();
}
