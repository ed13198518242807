/**
 * The bench's lifetime: free ports, a registry of cleanup steps (stop a server, DynamoDB Local's Java process...)
 * that runs at the end, on error and on Ctrl-C, and a DynamoDB Local of its own for a part on fresh tables.
 *
 * @module
 */
import { startDynamoDbLocal } from '../shared/store/dynamodb-local.js';
import { progress } from './output.js';
import { freePort } from '../test/support/ports.js';

const cleanups: Array<{ name: string; run: () => Promise<void> | void }> = [];
let cleaning: Promise<void> | null = null;

/** Registers a cleanup step (stop a server, a Java process...). Steps run last-registered first. */
export function onCleanup(name: string, run: () => Promise<void> | void): void {
  cleanups.push({ name, run });
}

/**
 * Runs every registered cleanup step once, last-registered first; a failing step is reported on
 * stderr and does not stop the others. Safe to call several times (later calls await the first).
 */
export function runCleanups(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length) {
      const step = cleanups.pop()!;
      try {
        await step.run();
      } catch (error) {
        process.stderr.write(`cleanup "${step.name}" failed: ${(error as Error).message}\n`);
      }
    }
  })();
  return cleaning;
}

let signalled = false;

/** True once SIGINT / SIGTERM was received (errors that follow from stopping are not worth printing). */
export function isStopping(): boolean {
  return signalled;
}

/**
 * On SIGINT / SIGTERM (Ctrl-C), runs the cleanups (so DynamoDB Local's Java process never outlives the
 * bench) and exits with 130 / 143. A second signal exits at once.
 */
export function installSignalHandlers(): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (signalled) process.exit(code);
      signalled = true;
      process.stderr.write(`\n${signal}: stopping...\n`);
      void runCleanups().finally(() => process.exit(code));
    });
  }
}

/** Runs `part` against a DynamoDB Local of its own (started on a free port, stopped afterwards). */
export async function withFreshDynamoDb<T>(name: string, part: (endpoint: string) => Promise<T>): Promise<T> {
  const port = await freePort();
  progress(`${name}: starting a fresh DynamoDB Local on 127.0.0.1:${port}`);
  const dynamoDb = await startDynamoDbLocal({ port });
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= dynamoDb.stop());
  onCleanup(`DynamoDB Local (${name})`, stop);
  try {
    return await part(dynamoDb.endpoint);
  } finally {
    await stop();
  }
}
