import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { requireAbility } from '../auth/authorize.js';
import { parseBearer, verifyToken, type Principal } from '../auth/tokens.js';
import { ProblemError, toProblem } from '../errors.js';
import { consumeRateLimit, rateLimitHeaders, type RateLimitState } from '../limits/rate-limit.js';
import type { Runtime } from '../runtime.js';
import { keys } from '../store/keys.js';
import { buildMcpServer } from './server.js';

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

interface SessionItem {
  team_id: string;
  token_id: string;
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
  const result = await runtime.store.document.send(
    new BatchGetCommand({ RequestItems: { [runtime.store.tableName]: { Keys: requestKeys, ConsistentRead: true } } }),
  );
  const items = result.Responses?.[runtime.store.tableName] ?? [];
  const tokenItem = items.find((item) => item.sk === tokenKey.sk);
  const principal = verifyToken(tokenItem, secret);
  const sessionItem = sessionId ? (items.find((item) => item.sk !== tokenKey.sk) as SessionItem | undefined) ?? null : null;
  return { principal, session: sessionItem };
}

/**
 * Serves one HTTP request of the streamable-HTTP tool server (DESIGN D5), as web `Request` → `Response`:
 * preflight `OPTIONS` before authentication → authenticate (no/invalid token: the per-IP
 * `mcp-anonymous` bucket, then 401) → `mcp` rate limit per token (429) → the `mcp:full` gate (403,
 * before any JSON-RPC is read) → `GET` 405 / `DELETE` ends the session / `POST` JSON-RPC through the
 * SDK transport in JSON-response mode. `initialize` creates a session stored in DynamoDB and returns
 * `MCP-Session-Id`; other requests need a live session of the same token (else 404; missing header 400).
 * CORS headers of the interface on every response; cookies ignored and never set. Never throws.
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
    if (!(error instanceof ProblemError)) console.error(JSON.stringify({ level: 'error', request_id: requestId, message: (error as Error)?.message, stack: (error as Error)?.stack }));
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
    const liveSession = session && session.expires_at > runtime.clock.nowMs() / 1000 ? session : null;
    if (method === 'DELETE') {
      if (!sessionId) return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      if (!liveSession) return jsonRpcError(404, -32001, 'Session not found');
      await runtime.store.document.send(new DeleteCommand({ TableName: runtime.store.tableName, Key: keys.session(principal.tokenId, sessionId) }));
      return new Response(null, { status: 204 });
    }
    if (method !== 'POST') {
      return new Response(null, { status: 405, headers: { Allow: 'POST, GET, DELETE, OPTIONS' } });
    }

    const text = await request.text();
    if (Buffer.byteLength(text) > MAX_MCP_BODY_BYTES) return jsonRpcError(413, -32000, `Request body larger than ${MAX_MCP_BODY_BYTES} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    const isInitialize = messages.some((message) => message && typeof message === 'object' && (message as { method?: unknown }).method === 'initialize');
    if (parsed !== undefined && !isInitialize) {
      if (!sessionId) return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      if (!liveSession) return jsonRpcError(404, -32001, 'Session not found');
    }

    const server = buildMcpServer(runtime, principal, requestId);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const forwarded = new Request(request.url, { method: 'POST', headers: request.headers, body: text });
      const result = await transport.handleRequest(forwarded, parsed === undefined ? undefined : { parsedBody: parsed });
      if (isInitialize && result.status === 200) {
        const newSessionId = randomUUID();
        const nowSeconds = Math.floor(runtime.clock.nowMs() / 1000);
        await runtime.store.document
          .send(
            new PutCommand({
              TableName: runtime.store.tableName,
              Item: { ...keys.session(principal.tokenId, newSessionId), entity: 'mcp_session', team_id: principal.teamId, token_id: principal.tokenId, created_at: nowSeconds, expires_at: nowSeconds + MCP_SESSION_LIFETIME_SECONDS },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          )
          .catch((error) => {
            if (error instanceof ConditionalCheckFailedException) throw new Error('session id collision');
            throw error;
          });
        return withHeaders(result, { 'MCP-Session-Id': newSessionId });
      }
      return result;
    } finally {
      await server.close().catch(() => undefined);
    }
  }
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), { status, headers: { 'Content-Type': 'application/json' } });
}
