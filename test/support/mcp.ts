/**
 * Helpers for tool-server tests (interface "Tool server", DESIGN D5): a raw JSON-RPC `post()` that
 * speaks the streamable-HTTP transport by hand (so tests can send what a well-behaved client never
 * would), an `initialize` shortcut, and a loopback proxy that adds a bearer token to every request
 * (the official conformance suite sends no credentials).
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The `Accept` header the streamable-HTTP transport requires on POST (JSON and SSE both listed). */
const MCP_ACCEPT = 'application/json, text/event-stream';
/** The protocol version the tests negotiate (the newest one the installed SDK supports). */
export const TEST_PROTOCOL_VERSION = '2025-11-25';

/** A raw tool-server answer: status, headers, the body text and, when it is JSON, the parsed body. */
export interface RawMcpResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body; `undefined` when the body is empty or not JSON. */
  json: any;
}

/** Options of {@link post} and {@link send}. */
export interface RawMcpOptions {
  /** Bearer token; omitted → no `Authorization` header. */
  token?: string;
  /** `MCP-Session-Id` header. */
  sessionId?: string;
  /** `MCP-Protocol-Version` header; `null` → header omitted (default {@link TEST_PROTOCOL_VERSION}). */
  protocolVersion?: string | null;
  /** Extra headers, applied last (may override the defaults, e.g. `Accept`, `Content-Type`). */
  headers?: Record<string, string>;
}

/** Reads a tool-server response: status, headers, text, and the JSON body when it parses. */
export async function toRaw(response: Response): Promise<RawMcpResponse> {
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

function buildHeaders(options: RawMcpOptions): Headers {
  const headers = new Headers();
  if (options.token) headers.set('Authorization', `Bearer ${options.token}`);
  if (options.sessionId) headers.set('MCP-Session-Id', options.sessionId);
  const version = options.protocolVersion === undefined ? TEST_PROTOCOL_VERSION : options.protocolVersion;
  if (version !== null) headers.set('MCP-Protocol-Version', version);
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
  return headers;
}

/**
 * POSTs one JSON-RPC message (or a batch, or — when `body` is a string — raw text) to the tool server
 * with `Content-Type: application/json` and the {@link MCP_ACCEPT} header.
 */
export async function post(url: string, body: unknown, options: RawMcpOptions = {}): Promise<RawMcpResponse> {
  const headers = buildHeaders({
    ...options,
    headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT, ...options.headers },
  });
  return toRaw(
    await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) }),
  );
}

/** Sends a request with any method (GET, DELETE, OPTIONS, PUT...) and no body. */
export async function send(url: string, method: string, options: RawMcpOptions = {}): Promise<RawMcpResponse> {
  return toRaw(await fetch(url, { method, headers: buildHeaders(options) }));
}

/** A JSON-RPC `initialize` request (`id` 0 by default) for {@link TEST_PROTOCOL_VERSION}. */
export function initializeMessage(id: number | string = 0, protocolVersion = TEST_PROTOCOL_VERSION) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-test-client', version: '1.0.0' } },
  };
}

/**
 * Runs `initialize` + `notifications/initialized` with `token` and returns the `MCP-Session-Id`.
 * Throws when the server does not answer 200 with a session id.
 */
export async function openSession(url: string, token: string): Promise<string> {
  const response = await post(url, initializeMessage(), { token, protocolVersion: null });
  const sessionId = response.headers.get('mcp-session-id');
  if (response.status !== 200 || !sessionId) throw new Error(`initialize failed: ${response.status} ${response.text}`);
  const initialized = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { token, sessionId });
  if (initialized.status !== 202)
    throw new Error(`notifications/initialized failed: ${initialized.status} ${initialized.text}`);
  return sessionId;
}

/** What {@link startBearerProxy} saw of one forwarded request: its HTTP method and MCP headers (absent: undefined). */
interface SeenRequest {
  httpMethod: string;
  protocolVersion?: string;
  mcpMethod?: string;
  sessionId?: string;
}

/** A running loopback proxy of {@link startBearerProxy}. */
export interface BearerProxy {
  /** `http://127.0.0.1:<port>/mcp`: point a token-less client here. */
  url: string;
  /** Number of requests forwarded so far. */
  forwarded(): number;
  /** The requests forwarded so far, in order. */
  seen(): SeenRequest[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

function forwardableHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) result[name] = value;
  return result;
}

/**
 * Starts a test-only HTTP proxy on 127.0.0.1 (port 0) that forwards every request (method, path query, headers
 * including Host and Origin, body) to `targetUrl`'s origin and path with `Authorization: Bearer <token>` added —
 * overwriting any presented one — and streams the answer back unchanged. It exists because the official conformance
 * suite sends no credentials; the service itself never turns authentication off. With a function for `token`, each
 * request outside a session takes the token it returns, and a session's requests the token that opened it.
 */
export async function startBearerProxy(targetUrl: string, token: string | (() => string)): Promise<BearerProxy> {
  const target = new URL(targetUrl);
  const seen: SeenRequest[] = [];
  /** The token each session was opened with: a session is bound to its token (D5). */
  const sessionTokens = new Map<string, string>();
  const server: Server = createServer((incoming, outgoing) => {
    const header = (name: string) => {
      const value = incoming.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    const sessionId = header('mcp-session-id');
    seen.push({
      httpMethod: incoming.method ?? '',
      protocolVersion: header('mcp-protocol-version'),
      mcpMethod: header('mcp-method'),
      sessionId,
    });
    const headers = forwardableHeaders(incoming.headers); // Host and Origin pass through as the client sent them
    const bearer =
      (sessionId === undefined ? undefined : sessionTokens.get(sessionId)) ??
      (typeof token === 'string' ? token : token());
    headers.authorization = `Bearer ${bearer}`;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: target.pathname + (new URL(incoming.url ?? '/', 'http://proxy').search || ''),
        headers,
      },
      (answer) => {
        const opened = answer.headers['mcp-session-id'];
        if (typeof opened === 'string') sessionTokens.set(opened, bearer);
        outgoing.writeHead(answer.statusCode ?? 502, forwardableHeaders(answer.headers));
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'Content-Type': 'text/plain' });
      outgoing.end(`proxy error: ${error.message}`);
    });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    forwarded: () => seen.length,
    seen: () => [...seen],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
