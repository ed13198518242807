import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { requireAbility } from '../auth/authorize.js';
import { parseBearer, verifyToken, type Principal } from '../auth/principal.js';
import { ProblemError, toProblem } from '../errors.js';
import { consumeRateLimit, rateLimitHeaders, type RateLimitState } from '../limits/rate-limit.js';
import type { Runtime } from '../runtime.js';
import { entity, keys } from '../store/keys.js';
import { ConditionFailedError } from '../store/store.js';
import { buildMcpServer, connectMcpServer } from './server.js';
import { logger } from '../logger.js';

/** Sessions end 24 hours after `initialize` (seconds); checked in code, TTL only cleans up. */
export const MCP_SESSION_LIFETIME_SECONDS = 24 * 60 * 60;
/** Largest accepted JSON-RPC body, in bytes (1 MiB). */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/** CORS of the tool server, exactly as the interface's table ("CORS (tool server)"). */
export const MCP_CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, GET, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, MCP-Session-Id, MCP-Protocol-Version, Last-Event-ID',
  'Access-Control-Expose-Headers': 'MCP-Session-Id, X-RateLimit-Limit, X-RateLimit-Remaining, Retry-After, WWW-Authenticate',
  'Access-Control-Max-Age': '86400',
};

/** Per-request facts the HTTP edge knows (API Gateway or the local server). */
export interface McpRequestContext {
  /** Client IP, for the unauthenticated bucket. */
  clientIp: string;
  requestId?: string;
  /** Called once per request with the final status (the local server logs a line). */
  onResponse?: (line: { method: string; path: string; status: number; duration_ms: number; request_id: string; operation: string | null }) => void;
}

/**
 * A problem-document response (DESIGN D1) for a request that never reached
 * {@link handleMcpHttpRequest} (e.g. an API Gateway event that is not a valid HTTP request), with the
 * interface's CORS headers and `X-Request-Id`. A {@link ProblemError} keeps its code; anything else is
 * INTERNAL_ERROR (500).
 */
export function mcpProblemResponse(error: unknown, requestId: string): Response {
  return withHeaders(problemResponse(error, requestId), { ...MCP_CORS_HEADERS, 'X-Request-Id': requestId });
}

function problemResponse(error: unknown, requestId: string, extraHeaders: Record<string, string> = {}): Response {
  const { problem, headers } = toProblem(error, requestId);
  return new Response(JSON.stringify(problem), { status: problem.status, headers: { 'Content-Type': 'application/problem+json', ...headers, ...extraHeaders } });
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  const merged = new Headers(response.headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  merged.delete('set-cookie'); // cookies are never set on the tool-server surface
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: merged });
}

/** A stored tool-server session (key: {@link keys.session}). */
interface SessionItem {
  team_id: string;
  token_id: string;
  /** The protocol version negotiated at `initialize` (absent on sessions stored before it was kept). */
  protocol_version?: string;
  /** Epoch seconds. */
  expires_at: number;
}

/**
 * Authenticates the bearer token and, when `sessionId` is given, reads the session in the same
 * BatchGetItem (sessions live in the token's partition, so a session used with another token is
 * simply not found). One DynamoDB request, strongly consistent. Throws AUTHENTICATION_REQUIRED.
 */
async function authenticateWithSession(runtime: Runtime, authorization: string | undefined, sessionId: string | null): Promise<{ principal: Principal; session: SessionItem | null }> {
  const { tokenId, secret } = parseBearer(authorization);
  const tokenKey = keys.token(tokenId);
  const requestKeys: Record<string, string>[] = [tokenKey];
  if (sessionId) requestKeys.push(keys.session(tokenId, sessionId));
  const items = await runtime.store.batchGet(requestKeys);
  const tokenItem = items.find((item) => item.sk === tokenKey.sk);
  const principal = verifyToken(tokenItem, secret);
  const sessionItem = sessionId ? (items.find((item) => item.sk !== tokenKey.sk) as SessionItem | undefined) ?? null : null;
  return { principal, session: sessionItem };
}

/** Protocol versions from which JSON-RPC batching is gone (MCP 2025-06-18 removed it). */
const FIRST_VERSION_WITHOUT_BATCHING = '2025-06-18';

/** A JSON-RPC error answer (`id` null unless the offending message had a usable id). */
function jsonRpcError(status: number, code: number, message: string, id: string | number | null = null): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }), { status, headers: { 'Content-Type': 'application/json' } });
}

const SESSION_HEADER_REQUIRED = () => jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
const SESSION_NOT_FOUND = () => jsonRpcError(404, -32001, 'Session not found');

/** 400 for an `MCP-Protocol-Version` header naming a version this server does not support; null otherwise (absent is fine). */
function unsupportedProtocolVersion(header: string | null): Response | null {
  if (header === null || SUPPORTED_PROTOCOL_VERSIONS.includes(header)) return null;
  return jsonRpcError(400, -32000, `Bad Request: Unsupported protocol version: ${header} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
}

/** The id of a message that failed validation, when it has a usable one (JSON-RPC 2.0 §5: else null). */
function usableId(message: unknown): string | number | null {
  const id = message && typeof message === 'object' ? (message as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/**
 * Checks the shape of a parsed POST body before anything else reads it (JSON-RPC 2.0 §5, MCP
 * "Transports"): a single object must be a JSON-RPC request, notification or response, else -32600;
 * an array (a batch) is refused with -32600 when the effective protocol version is 2025-06-18 or
 * later (batching was removed then), when empty, or when any member is invalid (the whole batch is
 * refused; no per-member answers). Returns a 400 response, or null when the body may go on.
 */
function invalidJsonRpc(parsed: unknown, protocolVersion: string): Response | null {
  if (Array.isArray(parsed)) {
    if (protocolVersion >= FIRST_VERSION_WITHOUT_BATCHING) {
      return jsonRpcError(400, -32600, `Invalid Request: JSON-RPC batches are not supported in protocol version ${protocolVersion}; send one message per POST`);
    }
    if (parsed.length === 0) return jsonRpcError(400, -32600, 'Invalid Request: empty batch');
    const invalid = parsed.find((message) => !JSONRPCMessageSchema.safeParse(message).success);
    if (invalid !== undefined) return jsonRpcError(400, -32600, 'Invalid Request: a batch member is not a JSON-RPC 2.0 message', usableId(invalid));
    return null;
  }
  if (!JSONRPCMessageSchema.safeParse(parsed).success) return jsonRpcError(400, -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response', usableId(parsed));
  return null;
}

/**
 * Serves one HTTP request of the streamable-HTTP tool server (interface "Tool server", "Tool-server
 * authorization", "CORS (tool server)", "Limits"; DESIGN D1, D4, D5), as web `Request` → `Response`:
 *
 * 1. `OPTIONS` (preflight) → 204 before authentication, no token needed.
 * 2. Authenticate the bearer token and read the `MCP-Session-Id` session in one BatchGet. No, malformed,
 *    unknown or revoked token (a cookie never counts) → the per-IP `mcp-anonymous` bucket (5/min; 429
 *    when full), then 401 `AUTHENTICATION_REQUIRED` with `WWW-Authenticate: Bearer`.
 * 3. `mcp` bucket per token (120/min) → 429 `RATE_LIMITED` with `Retry-After` (seconds).
 * 4. `mcp:full` gate → 403 `TOKEN_MISSING_ABILITY` before any JSON-RPC is read (even a malformed body).
 * 5. `GET` → 405 (no server-initiated stream); other methods but POST/DELETE → 405.
 * 6. `DELETE` → 400 without a session header, 400 for an unsupported `MCP-Protocol-Version`, 404 for
 *    an unknown/expired/foreign session, else the session is deleted → 204.
 * 7. `POST` → 413 over {@link MAX_MCP_BODY_BYTES}; invalid JSON → 400 -32700; not JSON-RPC → 400 -32600
 *    (batches: see {@link invalidJsonRpc}); non-`initialize` messages need the session header (400), a
 *    supported `MCP-Protocol-Version` when present (400; absent → the version negotiated at
 *    `initialize`), and a live session of this token (404: unknown, expired after
 *    {@link MCP_SESSION_LIFETIME_SECONDS}, deleted, or another token's). Then the SDK transport in
 *    stateless JSON-response mode answers (406 without the right `Accept`, 415 for a non-JSON
 *    `Content-Type`, -32601 unknown method, -32602 invalid params or unknown tool). A successful
 *    `initialize` stores a new session (random UUID, bound to the token, with the negotiated
 *    version) and returns it in `MCP-Session-Id`.
 *
 * Every response carries the interface's CORS headers (never `Access-Control-Allow-Credentials`),
 * `X-Request-Id`, and — once a bucket was consulted — `X-RateLimit-Limit`/`X-RateLimit-Remaining`.
 * Cookies are ignored and never set. Never throws: unexpected errors become a 500 problem document.
 */
export async function handleMcpHttpRequest(runtime: Runtime, request: Request, context: McpRequestContext): Promise<Response> {
  const started = performance.now();
  const requestId = context.requestId ?? randomUUID();
  const method = request.method.toUpperCase();
  let rate: RateLimitState | null = null;
  let response: Response;
  try {
    response = await serve();
  } catch (error) {
    if (!(error instanceof ProblemError)) logger.error('unexpected error', { request_id: requestId, error: error as Error });
    response = problemResponse(error, requestId);
  }
  const headers: Record<string, string> = { ...MCP_CORS_HEADERS, 'X-Request-Id': requestId };
  if (rate) Object.assign(headers, rateLimitHeaders(rate));
  response = withHeaders(response, headers);
  context.onResponse?.({ method, path: new URL(request.url).pathname, status: response.status, duration_ms: Math.round(performance.now() - started), request_id: requestId, operation: null });
  return response;

  async function serve(): Promise<Response> {
    if (method === 'OPTIONS') return new Response(null, { status: 204 });
    const sessionId = request.headers.get('mcp-session-id');
    let principal: Principal;
    let session: SessionItem | null;
    try {
      ({ principal, session } = await authenticateWithSession(runtime, request.headers.get('authorization') ?? undefined, sessionId));
    } catch (error) {
      if (error instanceof ProblemError && error.code === 'AUTHENTICATION_REQUIRED') {
        rate = await consumeRateLimit(runtime.store, runtime.clock, 'mcp-anonymous', context.clientIp);
      }
      throw error;
    }
    rate = await consumeRateLimit(runtime.store, runtime.clock, 'mcp', principal.tokenId);
    requireAbility(principal, 'mcp:full');

    if (method === 'GET') {
      return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server sends no server-initiated stream; POST JSON-RPC messages.' }, id: null }), {
        status: 405,
        headers: { Allow: 'POST, DELETE, OPTIONS', 'Content-Type': 'application/json' },
      });
    }
    if (method !== 'POST' && method !== 'DELETE') {
      return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }), {
        status: 405,
        headers: { Allow: 'POST, GET, DELETE, OPTIONS', 'Content-Type': 'application/json' },
      });
    }
    const versionHeader = request.headers.get('mcp-protocol-version');
    const liveSession = session && session.expires_at > runtime.clock.nowMs() / 1000 ? session : null;
    if (method === 'DELETE') {
      if (!sessionId) return SESSION_HEADER_REQUIRED();
      const badVersion = unsupportedProtocolVersion(versionHeader);
      if (badVersion) return badVersion;
      if (!liveSession) return SESSION_NOT_FOUND();
      await runtime.store.delete({ Key: keys.session(principal.tokenId, sessionId) });
      return new Response(null, { status: 204 });
    }

    const text = await request.text();
    if (Buffer.byteLength(text) > MAX_MCP_BODY_BYTES) return jsonRpcError(413, -32000, `Request body larger than ${MAX_MCP_BODY_BYTES} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: Invalid JSON');
    }
    const effectiveVersion = versionHeader ?? liveSession?.protocol_version ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    const invalid = invalidJsonRpc(parsed, effectiveVersion);
    if (invalid) return invalid;
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ method?: unknown; id?: unknown }>;
    const initialize = messages.find((message) => message.method === 'initialize');
    if (!initialize) {
      if (!sessionId) return SESSION_HEADER_REQUIRED();
      const badVersion = unsupportedProtocolVersion(versionHeader);
      if (badVersion) return badVersion;
      if (!liveSession) return SESSION_NOT_FOUND();
    }

    const server = buildMcpServer(runtime, principal, requestId);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await connectMcpServer(server, transport);
    try {
      const forwarded = new Request(request.url, { method: 'POST', headers: request.headers, body: text });
      const result = await transport.handleRequest(forwarded, { parsedBody: parsed });
      if (!initialize || result.status !== 200) return result;
      const answer = (await result.clone().json()) as { id?: unknown; result?: { protocolVersion?: unknown } };
      if (answer.id !== initialize.id || typeof answer.result?.protocolVersion !== 'string') return result; // initialize failed: no session
      const newSessionId = await createSession(runtime, principal, answer.result.protocolVersion);
      return withHeaders(result, { 'MCP-Session-Id': newSessionId });
    } finally {
      await server.close().catch(() => undefined);
    }
  }
}

/**
 * Stores a new tool-server session (DESIGN D5): a random UUID in the token's partition (so only that
 * token finds it), with the negotiated protocol version and `expires_at` = now +
 * {@link MCP_SESSION_LIFETIME_SECONDS} (epoch seconds; also the TTL attribute). Returns the id.
 */
async function createSession(runtime: Runtime, principal: Principal, protocolVersion: string): Promise<string> {
  const sessionId = randomUUID();
  const nowSeconds = Math.floor(runtime.clock.nowMs() / 1000);
  const item = {
    ...keys.session(principal.tokenId, sessionId),
    entity: entity.mcpSession,
    team_id: principal.teamId,
    token_id: principal.tokenId,
    protocol_version: protocolVersion,
    created_at: nowSeconds,
    expires_at: nowSeconds + MCP_SESSION_LIFETIME_SECONDS,
  };
  try {
    await runtime.store.put({ Item: item, ConditionExpression: 'attribute_not_exists(pk)' });
  } catch (error) {
    if (error instanceof ConditionFailedError) throw new Error('session id collision');
    throw error;
  }
  return sessionId;
}
