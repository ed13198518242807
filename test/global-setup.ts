import { startDynamoDbLocal, type DynamoDbLocalHandle } from '../shared/store/dynamodb-local.js';
import { freePort } from './support/ports.js';

/**
 * Starts DynamoDB Local for the whole test run on free loopback ports: one instance per test worker
 * (vitest's `maxWorkers`, 2), because one instance runs every SQLite statement of every table on ONE thread
 * (its SQLiteQueue), which two workers keep at a full core while they wait on it; with one each, the two
 * workers' stores run side by side. The endpoints are handed to the workers as DYNAMODB_ENDPOINTS (space
 * separated) and DYNAMODB_ENDPOINT (the first); test/setup-file.ts points each worker at its own. Test files
 * create their own uniquely named tables (test/support/store.ts). With DYNAMODB_ENDPOINT already set, that
 * one store is used and nothing is started. A second project's setup finds it set and starts nothing more.
 */
const handles: DynamoDbLocalHandle[] = [];
const INSTANCES = 2;

export async function setup(): Promise<void> {
  if (process.env.DYNAMODB_ENDPOINT) return;
  const ports: number[] = [];
  for (let index = 0; index < INSTANCES; index++) {
    let port = await freePort();
    while (ports.includes(port)) port = await freePort();
    ports.push(port);
  }
  // Generous: two JVMs starting at once on a loaded 2-core machine can take longer than the 30 s default.
  const started = await Promise.allSettled(ports.map((port) => startDynamoDbLocal({ port, timeoutMs: 120_000 })));
  for (const outcome of started) if (outcome.status === 'fulfilled') handles.push(outcome.value);
  const failed = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) {
    await teardown();
    throw failed.reason;
  }
  process.env.DYNAMODB_ENDPOINTS = handles.map((handle) => handle.endpoint).join(' ');
  process.env.DYNAMODB_ENDPOINT = handles[0].endpoint;
}

export async function teardown(): Promise<void> {
  await Promise.all(handles.splice(0).map((handle) => handle.stop()));
}
