import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { ABILITY_VALUES } from '../catalogues/abilities.js';
import { systemClock, type Clock } from '../clock.js';
import { MCP_PATH, localConfig } from '../config.js';
import { mintToken } from '../domain/tokens/repository.js';
import { createTeam, findTeam, getTeam } from '../domain/teams/repository.js';
import { createRestHandler } from '../http/rest-handler.js';
import { nodeRequestToEvent, writeResult } from '../http/api-gateway.js';
import { createMcpHandler } from '../mcp/lambda.js';
import { createTables } from '../store/create-tables.js';
import { startDynamoDbLocal, type DynamoDbLocalHandle } from '../store/dynamodb-local.js';
import { keys } from '../store/keys.js';
import { ConditionFailedError, createStore, type Store } from '../store/store.js';
import { createHttpsTransport } from '../domain/webhook-deliveries/transport/https-transport.js';
import { extraCaFromEnvironment } from '../domain/webhook-deliveries/transport/trust.js';
import type { WebhookTransport } from '../domain/webhook-deliveries/transport/port.js';
import { createLocalRuntime, type LocalRuntime } from './runtime.js';

/** The demo team seeded once into a fresh store (fixed id, so a kept DATA_DIR is not seeded twice). */
export const DEMO_TEAM_ID = '00000000-0000-4000-8000-000000000001';
export { MCP_PATH } from '../config.js';

/** Settings of {@link startLocalService}; {@link localServiceOptionsFromEnvironment} reads them from the environment. */
export interface LocalServiceOptions {
  /** Default 127.0.0.1 (`HOST`). */
  host: string;
  /** Default 3000 (`PORT`); 0 picks a free port. */
  port: number;
  /** Use this DynamoDB instead of starting DynamoDB Local (`DYNAMODB_ENDPOINT`). */
  dynamoDbEndpoint?: string;
  /** Port for the embedded DynamoDB Local (`DYNAMODB_LOCAL_PORT`, default 8000). */
  dynamoDbLocalPort: number;
  /** Keep DynamoDB Local's data here (`DATA_DIR`); in memory otherwise. */
  dataDirectory?: string;
  tableName: string;
  deadLetterTableName: string;
  /** `TIME_SCALE` ≥ 1 (default 1). */
  timeScale: number;
  /** PEM CAs trusted for webhook targets in addition to the system roots (`WEBHOOK_EXTRA_CA_FILE`). */
  extraCaPem: string[];
  /** `WEBHOOK_ALLOW_PRIVATE_TARGETS=1`. */
  allowPrivateTargets: boolean;
  /** One line per request / delivery; default: stdout. */
  log?: (line: string) => void;
  clock?: Clock;
  /** Override the outbound transport (tests). */
  transport?: WebhookTransport;
}

/** Reads {@link LocalServiceOptions} from the environment (`shared/config.ts`; DESIGN §1, §5). Throws `ConfigurationError` naming a bad value. */
export function localServiceOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): LocalServiceOptions {
  const config = localConfig(env);
  return {
    host: config.host,
    port: config.port,
    dynamoDbEndpoint: config.dynamoDbEndpoint,
    dynamoDbLocalPort: config.dynamoDbLocalPort,
    dataDirectory: config.dataDirectory,
    tableName: config.tableName,
    deadLetterTableName: config.deadLetterTableName,
    timeScale: config.timeScale,
    extraCaPem: extraCaFromEnvironment(env),
    allowPrivateTargets: config.allowPrivateTargets,
  };
}

/** A running local service. */
export interface LocalService {
  baseUrl: string;
  mcpUrl: string;
  /** A fresh token of the demo team holding every ability (minted at each start; shown only here). */
  demoToken: string;
  demoTeamId: string;
  store: Store;
  runtime: LocalRuntime;
  /** Stops the HTTP server, the pipeline and DynamoDB Local (if it started one). */
  stop(): Promise<void>;
}

const lambdaContext = { callbackWaitsForEmptyEventLoop: false, functionName: 'local', awsRequestId: 'local' } as unknown as Context;

/** Seeds the demo team once (a marker item guards it) and mints a demo token with every ability. */
async function seedDemo(store: Store, clock: Clock): Promise<string> {
  let team = await findTeam(store, DEMO_TEAM_ID);
  if (!team) {
    try {
      await store.put({ Item: { ...keys.demoSeedMarker(), seeded_at: new Date(clock.nowMs()).toISOString() }, ConditionExpression: 'attribute_not_exists(pk)' });
      team = await createTeam(store, clock, { id: DEMO_TEAM_ID, name: 'Demo team' });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      team = await getTeam(store, DEMO_TEAM_ID);
    }
  }
  const token = await mintToken(store, clock, { teamId: DEMO_TEAM_ID, team, abilities: ABILITY_VALUES, name: 'demo (npm start)' });
  return token.token;
}

/**
 * Starts the whole service in one process (DESIGN §5, `npm start`): DynamoDB Local (unless an endpoint
 * is given), the tables from the one table definition, the demo seed, the REST API and the tool server
 * on one HTTP server — both through the same Lambda handler modules as on AWS, fed API Gateway v2
 * events — and the webhook pipeline with the in-process queue and timers.
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const clock = options.clock ?? systemClock;
  let dynamoDb: DynamoDbLocalHandle | null = null;
  let endpoint = options.dynamoDbEndpoint;
  if (!endpoint) {
    dynamoDb = await startDynamoDbLocal({ port: options.dynamoDbLocalPort, dataDirectory: options.dataDirectory });
    endpoint = dynamoDb.endpoint;
  }
  try {
    const store = createStore({ endpoint, tableName: options.tableName, deadLetterTableName: options.deadLetterTableName });
    await createTables(store.document, { table: options.tableName, deadLetterTable: options.deadLetterTableName });
    const demoToken = await seedDemo(store, clock);
    const transport = options.transport ?? createHttpsTransport({ extraCaPem: options.extraCaPem, allowPrivateTargets: options.allowPrivateTargets });
    const runtime = createLocalRuntime({
      store,
      transport,
      clock,
      timeScale: options.timeScale,
      onDelivery: (line) => log(JSON.stringify({ type: 'delivery', ...line })),
    });
    const logRequest = (line: Record<string, unknown>) => log(JSON.stringify({ type: 'request', ...line }));
    const rest = createRestHandler(() => runtime, { onResponse: logRequest });
    const mcp = createMcpHandler(() => runtime, { onResponse: logRequest });
    const server: Server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const event = nodeRequestToEvent(request, Buffer.concat(chunks));
        const isMcp = event.rawPath === MCP_PATH;
        (isMcp ? mcp : rest)(event, lambdaContext)
          .then((result) => writeResult(response, result))
          .catch((error: unknown) => {
            log(JSON.stringify({ type: 'error', message: (error as Error).message }));
            if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'application/problem+json' });
            response.end();
          });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    runtime.start();
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const baseUrl = `http://${host}:${address.port}`;
    return {
      baseUrl,
      mcpUrl: `${baseUrl}${MCP_PATH}`,
      demoToken,
      demoTeamId: DEMO_TEAM_ID,
      store,
      runtime,
      async stop() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await runtime.stop();
        if ('close' in transport && typeof transport.close === 'function') await (transport as { close(): Promise<void> }).close();
        store.document.destroy();
        await dynamoDb?.stop();
      },
    };
  } catch (error) {
    await dynamoDb?.stop();
    throw error;
  }
}
