import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ABILITY_VALUES } from '../catalogues/abilities.js';
import { systemClock, type Clock } from '../clock.js';
import { mintToken } from '../auth/tokens.js';
import { createTeam, getTeam } from '../teams.js';
import { createRestHandler } from '../http/rest-handler.js';
import { nodeRequestToEvent, writeResult } from '../http/api-gateway.js';
import { createMcpHandler } from '../mcp/lambda.js';
import { createTables } from '../store/create-tables.js';
import { startDynamoDbLocal, type DynamoDbLocalHandle } from '../store/dynamodb-local.js';
import { createStore, type Store } from '../store/store.js';
import { createHttpsTransport, extraCaFromEnvironment } from '../webhooks/transport.js';
import type { WebhookTransport } from '../webhooks/transport.js';
import { createLocalRuntime, type LocalRuntime } from './runtime.js';

/** The demo team seeded once into a fresh store (fixed id, so a kept DATA_DIR is not seeded twice). */
export const DEMO_TEAM_ID = '00000000-0000-4000-8000-000000000001';
/** Path of the tool server on the local server. */
export const MCP_PATH = '/mcp';

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

/** Reads {@link LocalServiceOptions} from the environment (DESIGN §1, §5; issue TIME_SCALE). Throws on a bad value. */
export function localServiceOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): LocalServiceOptions {
  const timeScale = Number(env.TIME_SCALE ?? '1');
  if (!Number.isFinite(timeScale) || timeScale < 1) throw new Error(`TIME_SCALE must be a number ≥ 1, got ${env.TIME_SCALE}`);
  const port = Number(env.PORT ?? '3000');
  const dynamoDbLocalPort = Number(env.DYNAMODB_LOCAL_PORT ?? '8000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${env.PORT}`);
  if (!Number.isInteger(dynamoDbLocalPort) || dynamoDbLocalPort < 1 || dynamoDbLocalPort > 65535) throw new Error(`DYNAMODB_LOCAL_PORT must be a port number, got ${env.DYNAMODB_LOCAL_PORT}`);
  return {
    host: env.HOST ?? '127.0.0.1',
    port,
    dynamoDbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    dynamoDbLocalPort,
    dataDirectory: env.DATA_DIR || undefined,
    tableName: env.TABLE_NAME ?? 'membership',
    deadLetterTableName: env.DEAD_LETTER_TABLE_NAME ?? 'membership-dead-letters',
    timeScale,
    extraCaPem: extraCaFromEnvironment(env),
    allowPrivateTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS === '1',
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
  const existing = await store.document.send(new GetCommand({ TableName: store.tableName, Key: { pk: `TEAM#${DEMO_TEAM_ID}`, sk: 'TEAM' } }));
  let team = existing.Item ? { id: existing.Item.id as string, name: existing.Item.name as string, created_at: existing.Item.created_at as string } : null;
  if (!team) {
    try {
      await store.document.send(new PutCommand({ TableName: store.tableName, Item: { pk: 'SEED', sk: 'demo', seeded_at: new Date(clock.nowMs()).toISOString() }, ConditionExpression: 'attribute_not_exists(pk)' }));
      team = await createTeam(store, clock, { id: DEMO_TEAM_ID, name: 'Demo team' });
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
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
