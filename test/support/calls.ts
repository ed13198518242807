/**
 * The tests' one way to call an operation, on each surface it has: REST through the whole REST pipeline
 * (`handleRestRequest` fed an API Gateway v2 event, what API Gateway or the local server hands it), a tool
 * through `callTool` or the tool server's HTTP pipeline (`handleMcpHttpRequest`), and the dashboard through
 * its router (`handleDashboardRequest`). {@link caller} binds them to a test file's runtime and token.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { expect } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { handleRestRequest } from '../../shared/http/rest-handler.js';
import { handleMcpHttpRequest } from '../../shared/mcp/http-handler.js';
import { callTool, type ToolCallResult } from '../../shared/mcp/tools.js';
import type { Runtime } from '../../shared/runtime.js';
import { handlerOf } from '../../shared/domain/handlers.js';
import type { AnyHandler } from '../../shared/operations/handler.js';
import type { InternalOperationId, OperationId } from '../../shared/operations/registry.js';
import { runOperation, type OperationOutcome } from '../../shared/web/run-operation.js';
import { toRaw, type RawMcpResponse } from './mcp.js';

// ---------------------------------------------------------------------------------------------------
// REST
// ---------------------------------------------------------------------------------------------------

/** One REST request. `body`: a string is sent as is, anything else (except undefined) as JSON. */
export interface RestCall {
  method: string;
  path: string;
  /** Bearer token (the whole `svc_live_...` string); omitted → no Authorization header. */
  token?: string;
  /**
   * Extra headers (any case; API Gateway lower-cases them). A JSON body gets `content-type: application/json` unless
   * given.
   */
  headers?: Record<string, string>;
  body?: unknown;
  query?: Record<string, string>;
  /** Client IP (the per-IP anonymous bucket); default 198.51.100.7. */
  sourceIp?: string;
}

/** A REST answer: status, lower-cased headers, raw text and parsed JSON (undefined when not JSON). */
export interface RestReply {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

/** The API Gateway HTTP API (v2) event for a {@link RestCall}, as API Gateway would build it. */
function restEvent(call: RestCall): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const bodyText =
    call.body === undefined ? undefined : typeof call.body === 'string' ? call.body : JSON.stringify(call.body);
  if (bodyText !== undefined && typeof call.body !== 'string') headers['content-type'] = 'application/json';
  if (call.token !== undefined) headers.authorization = `Bearer ${call.token}`;
  for (const [name, value] of Object.entries(call.headers ?? {})) headers[name.toLowerCase()] = value;
  const query = call.query && Object.keys(call.query).length ? call.query : undefined;
  const rawQueryString = query ? new URLSearchParams(query).toString() : '';
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: call.path,
    rawQueryString,
    headers,
    queryStringParameters: query,
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'api.test',
      domainPrefix: 'api',
      http: {
        method: call.method,
        path: call.path,
        protocol: 'HTTP/1.1',
        sourceIp: call.sourceIp ?? '198.51.100.7',
        userAgent: 'vitest',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: bodyText === undefined ? undefined : Buffer.from(bodyText, 'utf8').toString('base64'),
    isBase64Encoded: bodyText !== undefined,
  };
}

/** Sends a {@link RestCall} through the whole REST pipeline and parses the answer. */
export async function rest(runtime: Runtime, call: RestCall): Promise<RestReply> {
  const result = await handleRestRequest(runtime, restEvent(call));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  let json: unknown;
  try {
    json = result.body ? JSON.parse(result.body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: result.statusCode, headers, text: result.body ?? '', json };
}

// ---------------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------------

/** Calls a tool as `principal` (through `callTool`, what `tools/call` runs) with a fresh request id. */
export async function tool(
  runtime: Runtime,
  principal: Principal,
  name: string,
  args: unknown = {},
  requestId: string = randomUUID(),
): Promise<ToolCallResult> {
  const result = await callTool(runtime, principal, name, args, requestId);
  if (!result) throw new Error(`unknown tool ${name}`);
  return result;
}

/** The MCP protocol version the tool-server HTTP tests speak. */
const MCP_PROTOCOL_VERSION = '2025-06-18';

/** A raw tool-server HTTP answer. */
export type McpReply = RawMcpResponse;

/**
 * POSTs one JSON-RPC message to the tool server's HTTP pipeline (`handleMcpHttpRequest`), as the
 * streamable-HTTP transport does (JSON and SSE accepted). `token` undefined → no Authorization header.
 */
export async function mcpPost(
  runtime: Runtime,
  message: unknown,
  options: { token?: string; sessionId?: string; clientIp?: string } = {},
): Promise<McpReply> {
  const headers = new Headers({
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MCP_PROTOCOL_VERSION,
  });
  if (options.token) headers.set('Authorization', `Bearer ${options.token}`);
  if (options.sessionId) headers.set('MCP-Session-Id', options.sessionId);
  const request = new Request('https://mcp.test/mcp', { method: 'POST', headers, body: JSON.stringify(message) });
  return toRaw(await handleMcpHttpRequest(runtime, request, { clientIp: options.clientIp ?? '198.51.100.8' }));
}

/** Opens a tool-server session (`initialize` + `notifications/initialized`) and returns its id. */
export async function mcpSession(runtime: Runtime, token: string): Promise<string> {
  const initialized = await mcpPost(
    runtime,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: MCP_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'guarantees', version: '1.0.0' },
      },
    },
    { token },
  );
  const sessionId = initialized.headers.get('mcp-session-id');
  if (initialized.status !== 200 || !sessionId)
    throw new Error(`initialize failed: ${initialized.status} ${initialized.text}`);
  await mcpPost(runtime, { jsonrpc: '2.0', method: 'notifications/initialized' }, { token, sessionId });
  return sessionId;
}

/** A `tools/call` JSON-RPC request. */
export function toolsCall(id: number, name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

// ---------------------------------------------------------------------------------------------------
// Dashboard
// ---------------------------------------------------------------------------------------------------

/** One dashboard request: the session cookie's value, a url-encoded form body, extra headers. */
interface DashboardCall {
  cookie?: string;
  /** The url-encoded body (`application/x-www-form-urlencoded`); a record is encoded. */
  form?: string | Record<string, string>;
  headers?: Record<string, string>;
}

/** The API Gateway v2 event of a dashboard request on `localhost:3000` over plain HTTP (`path` may carry a query). */
export function dashboardEvent(method: string, path: string, call: DashboardCall = {}) {
  const form = typeof call.form === 'object' ? new URLSearchParams(call.form).toString() : call.form;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path.split('?')[0],
    rawQueryString: path.split('?')[1] ?? '',
    cookies: call.cookie ? [`dashboard_session=${call.cookie}`] : undefined,
    headers: {
      host: 'localhost:3000',
      'x-forwarded-proto': 'http',
      ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...call.headers,
    },
    requestContext: { http: { method, path }, requestId: randomUUID() },
    body: form,
    isBase64Encoded: false,
  } as never;
}

/**
 * Runs any routed or internal operation through the pipeline as a dashboard page does (`runOperation` on the
 * `dashboard` surface) with its own handler, or `options.handler`; for tests that act as a page without its HTML.
 */
export function runAnyOperation<T = unknown>(
  runtime: Runtime,
  principal: Principal | null,
  operationId: OperationId | InternalOperationId,
  input: Record<string, unknown>,
  options: Omit<Parameters<typeof runOperation>[4], 'handler'> & { handler?: AnyHandler },
): Promise<OperationOutcome<T>> {
  return runOperation<T>(runtime, principal, operationId, input, {
    ...options,
    handler: options.handler ?? handlerOf(operationId),
  });
}

/** Sends a dashboard request through the dashboard router; resolves to its API Gateway result. */
function dashboardRequest(runtime: Runtime, method: string, path: string, call: DashboardCall = {}) {
  return handleDashboardRequest(runtime, dashboardEvent(method, path, call));
}

// ---------------------------------------------------------------------------------------------------
// Bound to a test file
// ---------------------------------------------------------------------------------------------------

/** Options of one {@link caller} REST call; `token` replaces the bound one, `idempotencyKey` sets the header. */
interface CallOptions {
  token?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  idempotencyKey?: string;
  sourceIp?: string;
}

/** What a {@link caller} acts as: read at each call, so a file's hooks may replace the runtime or the team. */
interface Bound {
  runtime: Runtime;
  token?: string;
  principal?: Principal;
}

/**
 * A test file's calls, bound to its runtime, token and principal: `call` (REST, any status), `ok` (REST,
 * expects `status`, default 200, and returns the JSON body), `tool` (a tool as the principal) and
 * `dashboard` (a dashboard request).
 */
export function caller(bound: () => Bound) {
  const call = (method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<RestReply> => {
    const { token = bound().token, idempotencyKey, headers, query, sourceIp } = options;
    const withKey = idempotencyKey ? { ...headers, 'idempotency-key': idempotencyKey } : headers;
    return rest(bound().runtime, { method, path, token, body, headers: withKey, query, sourceIp });
  };
  const ok = async (method: string, path: string, body?: unknown, status = 200, options: CallOptions = {}) => {
    const reply = await call(method, path, body, options);
    expect(reply.status, reply.text).toBe(status);
    return reply.json;
  };
  const asTool = (name: string, args: unknown = {}, principal?: Principal) => {
    const as = principal ?? bound().principal;
    if (!as) throw new Error('caller: no principal bound for a tool call');
    return tool(bound().runtime, as, name, args);
  };
  const dashboard = (method: string, path: string, call: DashboardCall = {}) =>
    dashboardRequest(bound().runtime, method, path, call);
  return { call, ok, tool: asTool, dashboard };
}
