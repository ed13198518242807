import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import getRawBody from 'raw-body';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { systemClock, type Clock } from '../clock.js';
import { MCP_PATH, localConfig, mailConfig } from '../config.js';
import { createRestHandler } from '../http/rest-handler.js';
import {
  API_GATEWAY_MAX_BODY_BYTES,
  nodeRequestToEvent,
  writeResult,
  type ApiGatewayResult,
} from '../http/api-gateway.js';
import { MAX_BODY_BYTES } from '../http/rest-pipeline.js';
import { MAX_MCP_BODY_BYTES } from '../mcp/responses.js';
import { createToolServerApiRouter } from './tool-server-api.js';
import { PROTECTED_RESOURCE_METADATA_PATHS } from '../mcp/resource-metadata.js';
import { isOAuthPath } from '../oauth/http-handler.js';
import { createTables } from '../store/create-tables.js';
import { startDynamoDbLocal, type DynamoDbLocalHandle } from '../store/dynamodb-local.js';
import { createStore, type Store } from '../store/store.js';
import { createHttpsTransport } from '../domain/webhook-deliveries/transport/https-transport.js';
import { extraCaFromEnvironment } from '../domain/webhook-deliveries/transport/trust.js';
import type { WebhookTransport } from '../domain/webhook-deliveries/transport/port.js';
import { isServedHost, servedHostnames } from './hosts.js';
import { answerEarly, foreignHostResult, tooLargeResult } from './early-answers.js';
import { DASHBOARD_PATH } from '../dashboard/http.js';
import { nodeListener } from '../web/node.js';
import { UNSUBSCRIBE_PATH } from '../domain/messages/paths.js';
import { JOIN_PATH, PORTAL_PATH } from '../public-pages/http.js';
import { createLocalRuntime, type LocalRuntime } from './runtime.js';
import { DEMO_TEAM_ID, demoEntryPoints, seedDemo } from './demo-data.js';
import { HOOKS_PATH_PREFIX, serveHookRequest } from '../hooks/dispatcher.js';
import { integrationsFromEnvironment, type IntegrationSettings } from '../integrations.js';
import { startLocalMail, type LocalMailOptions } from './inbox.js';

export { DEMO_OWNER, DEMO_TOKEN_FILE } from './demo-data.js';

/** Settings of {@link startLocalService}, read from the environment by {@link localServiceOptionsFromEnvironment}. */
export interface LocalServiceOptions extends Omit<LocalMailOptions, 'dataDirectory'> {
  /** Default 127.0.0.1 (`HOST`). */
  host: string;
  /** Default 3000 (`PORT`); 0 picks a free port. */
  port: number;
  /** Use this DynamoDB instead of starting DynamoDB Local (`DYNAMODB_ENDPOINT`). */
  dynamoDbEndpoint?: string;
  /** Port for the embedded DynamoDB Local (`DYNAMODB_LOCAL_PORT`, default 8000). */
  dynamoDbLocalPort: number;
  /**
   * Keep DynamoDB Local's data here (`DATA_DIR`); in memory otherwise. The demo token is kept here too
   * (`demo-token`, mode 0600), so a restart prints the same working token.
   */
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
  /** Seed the demo project's 60-day history in a fresh store (`DEMO_HISTORY`, 1 by default for `npm start`). */
  demoHistory?: boolean;
  /** Override the outbound transport (tests). */
  transport?: WebhookTransport;
  /**
   * Override integration settings (tests: a loopback Bot API); default the environment's, the public base URL
   * defaulting to the server's own.
   */
  integrations?: Partial<IntegrationSettings>;
}

/**
 * Reads {@link LocalServiceOptions} from the environment (`shared/config.ts`; DESIGN §1, §5). Throws
 * `ConfigurationError` naming a bad value.
 */
export function localServiceOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): LocalServiceOptions {
  const config = localConfig(env);
  const mail = mailConfig(env);
  return {
    host: config.host,
    port: config.port,
    dynamoDbEndpoint: config.dynamoDbEndpoint,
    dynamoDbLocalPort: config.dynamoDbLocalPort,
    dataDirectory: config.dataDirectory,
    tableName: config.tableName,
    deadLetterTableName: config.deadLetterTableName,
    timeScale: config.timeScale,
    demoHistory: config.demoHistory,
    extraCaPem: extraCaFromEnvironment(env),
    allowPrivateTargets: config.allowPrivateTargets,
    smtpUrl: mail.smtpUrl,
    mailFrom: mail.mailFrom,
    inbox: { smtpPort: config.inboxPorts.smtp, webPort: config.inboxPorts.web },
  };
}

/** A running local service. */
export interface LocalService {
  baseUrl: string;
  mcpUrl: string;
  /**
   * A token of the demo team holding every ability: minted at start, or — with `dataDirectory` — the one
   * kept in {@link demoTokenFile} when it still works (not revoked, every ability of the catalogue).
   */
  demoToken: string;
  /** Where the demo token is kept (`<DATA_DIR>/demo-token`, mode 0600); null without a data directory (shown once). */
  demoTokenFile: string | null;
  demoTeamId: string;
  /** The dashboard (`http://localhost:<port>/dashboard`: WebAuthn needs a host name, not an IP address). */
  dashboardUrl: string;
  /** A one-time sign-in link of the demo owner, valid 15 minutes (DESIGN D21). */
  demoSignInLink: { url: string; expires_at: string };
  /** The join page of the demo team's first project (DESIGN D26), or null when it has none. */
  demoJoinUrl: string | null;
  /** The embedded MailDev's web interface (`http://127.0.0.1:<port>/`), or null when none was started. */
  inboxUrl: string | null;
  /**
   * The demo history written after start-up (first start with `demoHistory`): the seconds it took, once written and the
   * sweeper and deadline worker run (they start after it); null when none is written.
   */
  demoHistory: Promise<number> | null;
  store: Store;
  runtime: LocalRuntime;
  /** Stops the HTTP server, the pipeline, the inbox and DynamoDB Local (those it started). */
  stop(): Promise<void>;
}

const lambdaContext = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'local',
  awsRequestId: 'local',
} as unknown as Context;

/**
 * Starts the whole service in one process (§5, `npm start`) through the same Lambda handlers as on AWS. Before handlers
 * (D5): a foreign or missing `Host` (DNS rebinding) gets 403 (MCP, -32000) or 422 (REST) unread; a body over
 * `MAX_BODY_BYTES`/`MAX_MCP_BODY_BYTES` gets 413 at once, never buffered.
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const clock = options.clock ?? systemClock;
  // E-mail (an inbox, D32) starts beside DynamoDB Local and is awaited below; a failure of either stops both.
  const mailStarting = startLocalMail(options);
  mailStarting.catch(() => undefined);
  let dynamoDb: DynamoDbLocalHandle | null = null;
  let endpoint = options.dynamoDbEndpoint;
  try {
    if (!endpoint) {
      dynamoDb = await startDynamoDbLocal({ port: options.dynamoDbLocalPort, dataDirectory: options.dataDirectory });
      endpoint = dynamoDb.endpoint;
    }
    const { mail, inbox } = await mailStarting;
    const store = createStore({
      endpoint,
      tableName: options.tableName,
      deadLetterTableName: options.deadLetterTableName,
    });
    await createTables(store.document, { table: options.tableName, deadLetterTable: options.deadLetterTableName });
    const demo = await seedDemo(store, clock, {
      dataDirectory: options.dataDirectory,
      history: options.demoHistory ?? false,
    });
    const transport =
      options.transport ??
      createHttpsTransport({ extraCaPem: options.extraCaPem, allowPrivateTargets: options.allowPrivateTargets });
    const runtime = createLocalRuntime({
      store,
      transport,
      mail,
      clock,
      timeScale: options.timeScale,
      onDelivery: (line) => log(JSON.stringify({ type: 'delivery', ...line })),
      onMessage: (line) => log(JSON.stringify({ type: 'message', ...line })),
    });
    const logRequest = (line: Record<string, unknown>) => log(JSON.stringify({ type: 'request', ...line }));
    const rest = createRestHandler(() => runtime, { onResponse: logRequest });
    const toolServer = createToolServerApiRouter(() => runtime, { onResponse: logRequest });
    const served = servedHostnames(options.host);
    const logEarly = (request: IncomingMessage, path: string, status: number, requestId: string) =>
      logRequest({
        method: (request.method ?? 'GET').toUpperCase(),
        path,
        status,
        duration_ms: 0,
        request_id: requestId,
        operation: null,
      });
    // Loaded on the first dashboard or public-page request, so start-up does not compile the pages.
    const listeners = new Map<string, Promise<ReturnType<typeof nodeListener>>>();
    const webListener = (surface: 'dashboard' | 'public-pages') => {
      const onResponse = (answer: Parameters<Parameters<typeof nodeListener>[1]>[0]) =>
        logRequest({
          method: answer.method,
          path: answer.path,
          status: answer.status,
          duration_ms: answer.durationMs,
          request_id: answer.requestId,
          operation: null,
        });
      let listener = listeners.get(surface);
      if (!listener) {
        const app =
          surface === 'dashboard'
            ? import('../dashboard/router.js').then(({ dashboardApp }) => dashboardApp(runtime))
            : import('../public-pages/router.js').then(({ publicPagesApp }) => publicPagesApp(runtime));
        listener = app.then((loaded) => nodeListener(loaded, onResponse));
        listeners.set(surface, listener);
      }
      return listener;
    };
    const server: Server = createServer((request, response) => {
      let path: string;
      try {
        path = new URL(request.url ?? '/', 'http://local').pathname;
      } catch {
        response.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
        response.end('The request target is not a valid URL path.\n');
        return;
      }
      // The tool server's API: `/mcp`, its protected-resource metadata and its OAuth authorization server (DESIGN D30).
      const isMcp = path === MCP_PATH || PROTECTED_RESOURCE_METADATA_PATHS.includes(path) || isOAuthPath(path);
      const isDashboard = path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
      const isPublicPage =
        path.startsWith(`${JOIN_PATH}/`) || path.startsWith(`${PORTAL_PATH}/`) || path === UNSUBSCRIBE_PATH;
      const isHook = path.startsWith(HOOKS_PATH_PREFIX);
      const fail = (error: unknown) => {
        log(JSON.stringify({ type: 'error', message: (error as Error).message }));
        if (!response.headersSent)
          response.writeHead(500, { 'Content-Type': 'application/problem+json', Connection: 'close' });
        response.end();
      };
      if (!isServedHost(request.headers.host, served)) {
        const requestId = randomUUID();
        foreignHostResult(isMcp, request.headers.host, requestId).then((result) => {
          answerEarly(response, result);
          logEarly(request, path, result.statusCode, requestId);
        }, fail);
        return;
      }
      if (isDashboard || isPublicPage) {
        // The HTML surfaces run their Hono app through @hono/node-server (which reads the body, 64 KiB at most).
        // As `nodeRequestToEvent` does: the scheme is plain HTTP whatever the client claims.
        const raw = request.rawHeaders;
        for (let index = raw.length - 2; index >= 0; index -= 2)
          if (raw[index].toLowerCase() === 'x-forwarded-proto') raw.splice(index, 2);
        raw.push('X-Forwarded-Proto', 'http');
        request.headers['x-forwarded-proto'] = 'http';
        webListener(isDashboard ? 'dashboard' : 'public-pages').then((listener) => listener(request, response), fail);
        return;
      }
      // Stop reading at the surface's limit and answer 413 at once (a Content-Length over it is refused
      // before any byte is read), as API Gateway refuses bodies over its 10 MB cap before any Lambda runs.
      const limit = Math.min(isMcp ? MAX_MCP_BODY_BYTES : MAX_BODY_BYTES, API_GATEWAY_MAX_BODY_BYTES);
      getRawBody(request, { limit, length: request.headers['content-length'] }).then(
        (body) => {
          const event = nodeRequestToEvent(request, body);
          const hook = async () =>
            await serveHookRequest(runtime, event).then(
              (result) => (logEarly(request, path, result.statusCode, result.headers['X-Request-Id'] ?? ''), result),
            );
          const served = isMcp ? toolServer(event, lambdaContext) : isHook ? hook() : rest(event, lambdaContext);
          served.then((result) => writeResult(response, result), fail);
        },
        (error: { type?: string; status?: number; message?: string }) => {
          if (error.type === 'request.aborted') return void response.destroy();
          const requestId = randomUUID();
          const answer: Promise<ApiGatewayResult> =
            error.type === 'entity.too.large'
              ? tooLargeResult(isMcp, limit, requestId)
              : Promise.resolve({
                  statusCode: error.status ?? 400,
                  headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Request-Id': requestId },
                  body: `${error.message ?? 'Bad request'}\n`,
                });
          answer.then((result) => {
            answerEarly(response, result);
            logEarly(request, path, result.statusCode, requestId);
          }, fail);
        },
      );
    });
    // Idle sockets outlive the clients' (undici: the hint less 1 s): under load a 5 s one resets as a client reuses it.
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const baseUrl = `http://${host}:${address.port}`;
    // WebAuthn refuses IP addresses as relying-party ids: the dashboard is printed with a loopback name,
    // and an MCP client's OAuth consent (DESIGN D30) is sent there whichever name the client dialled.
    const dashboardHost = ['127.0.0.1', '::1', '0.0.0.0', '::'].includes(address.address) ? 'localhost' : host;
    const dashboardUrl = `http://${dashboardHost}:${address.port}${DASHBOARD_PATH}`;
    runtime.allowPrivateTargets = options.allowPrivateTargets;
    const fromEnvironment = integrationsFromEnvironment();
    runtime.integrations = {
      ...fromEnvironment,
      publicBaseUrl: fromEnvironment.publicBaseUrl ?? baseUrl,
      dashboardBaseUrl: fromEnvironment.dashboardBaseUrl ?? `http://${dashboardHost}:${address.port}`,
      ...options.integrations,
    };
    const { demoSignInLink, demoJoinUrl } = await demoEntryPoints(runtime, demo.token, {
      baseUrl,
      dashboardOrigin: `http://${dashboardHost}:${address.port}`,
    });
    let stopped = false;
    // The pipeline's sweeper and deadline worker start after the history: its past events send no messages.
    const demoHistory = demo.history?.().finally(() => stopped || runtime.start()) ?? null;
    demoHistory?.catch(() => undefined); // the caller reports a failure; a stop during the write makes it fail
    if (!demoHistory) runtime.start();
    return {
      baseUrl,
      mcpUrl: `${baseUrl}${MCP_PATH}`,
      demoToken: demo.token,
      demoTokenFile: demo.file,
      demoTeamId: DEMO_TEAM_ID,
      dashboardUrl,
      demoSignInLink,
      demoJoinUrl,
      inboxUrl: inbox?.webUrl ?? null,
      demoHistory,
      store,
      runtime,
      async stop() {
        stopped = true;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await runtime.stop();
        if ('close' in transport && typeof transport.close === 'function')
          await (transport as { close(): Promise<void> }).close();
        store.document.destroy();
        await inbox?.stop();
        await dynamoDb?.stop();
      },
    };
  } catch (error) {
    await dynamoDb?.stop();
    await (await mailStarting.catch(() => null))?.inbox?.stop();
    throw error;
  }
}
