import { randomUUID } from 'node:crypto';
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { authenticateRequest } from '../auth/authenticate-request.js';
import { requireAbility } from '../auth/authorize.js';
import { ProblemError } from '../errors.js';
import { consumeRateLimit, rateLimitHeaders, type RateLimitState } from '../limits/rate-limit.js';
import type { Runtime } from '../runtime.js';
import {
  PROTECTED_RESOURCE_METADATA_PATHS,
  protectedResourceMetadataResponse,
  protectedResourceMetadataUrl,
} from './resource-metadata.js';
import { buildMcpServer, connectMcpServer, serveModernRequest } from './server.js';
import {
  invalidJsonRpc,
  methodNotAllowed,
  MODERN_PROTOCOL_VERSION,
  SESSION_HEADER_REQUIRED,
  SESSION_NOT_FOUND,
  toolListingOf,
  unsupportedProtocolVersion,
} from './request-checks.js';
import { createSession, deleteSession, isSessionId, liveSessionOf, sessionKeysToRead } from './sessions.js';
import { recordRefusedToolCalls, runsBesideAdmission } from './tools.js';
import { withGateChallenge, withToolScopeChallenge } from './scope-challenge.js';
import { logger } from '../logger.js';
import {
  jsonRpcError,
  MAX_MCP_BODY_BYTES,
  MCP_CORS_HEADERS,
  mcpPayloadTooLarge,
  problemResponse,
  withHeaders,
} from './responses.js';
import { serveWithRequestId, type McpRequestContext } from './edge.js';

/**
 * An AUTHENTICATION_REQUIRED problem of the tool server with `resource_metadata="<origin>/.well-known/
 * oauth-protected-resource/mcp"` added to its `WWW-Authenticate: Bearer` challenge (MCP "Authorization",
 * RFC 9728 §5.1), for the origin of `request`; any other problem is returned unchanged.
 */
function withResourceMetadata(error: ProblemError, request: Request): ProblemError {
  if (error.code !== 'AUTHENTICATION_REQUIRED') return error;
  const challenge = error.headers['WWW-Authenticate'] ?? 'Bearer realm="membership"';
  return new ProblemError(error.code, error.detail, {
    errors: error.errors,
    headers: {
      ...error.headers,
      'WWW-Authenticate': `${challenge}, resource_metadata="${protectedResourceMetadataUrl(request.url)}"`,
    },
  });
}

/**
 * Serves one streamable-HTTP tool-server request, web `Request` → `Response` (interface "Tool server", "Tool-server
 * authorization", "CORS (tool server)", "Limits"; DESIGN D1, D4, D5). Every response carries the CORS headers (never
 * `Access-Control-Allow-Credentials`) and `X-Request-Id`; cookies are ignored and never set. Never throws (unexpected →
 * 500 problem).
 */
export async function handleMcpHttpRequest(
  runtime: Runtime,
  request: Request,
  context: McpRequestContext,
): Promise<Response> {
  const started = performance.now();
  const requestId = context.requestId ?? randomUUID();
  const method = request.method.toUpperCase();
  let rate: RateLimitState | null = null;
  let bodyRead: Promise<{ parsed: unknown; tooLarge: boolean }> | undefined;
  return serveWithRequestId(request, { ...context, requestId }, async () => {
    let response: Response;
    try {
      response = await serve();
    } catch (error) {
      if (!(error instanceof ProblemError))
        logger.error('unexpected error', { request_id: requestId, error: error as Error });
      response = problemResponse(error, requestId);
    }
    return withHeaders(response, rate ? { ...MCP_CORS_HEADERS, ...rateLimitHeaders(rate) } : MCP_CORS_HEADERS);
  });

  async function serve(): Promise<Response> {
    // Preflight: 204 before authentication, no token needed.
    if (method === 'OPTIONS') return new Response(null, { status: 204 });
    // A 2026-07-28 request (its `_meta` envelope names the revision) is stateless: no session is read or written.
    const modern = await isModernRequest();
    const sessionHeader = modern ? null : request.headers.get('mcp-session-id');
    // The token, the session and the IP's counter are one BatchGet; a session id that is not a v4 UUID is never looked
    // up. A cookie never counts as a token.
    const sessionId = sessionHeader && isSessionId(sessionHeader) ? sessionHeader : null;
    const authentication = await authenticateRequest(runtime.store, runtime.clock, {
      authorization: request.headers.get('authorization') ?? undefined,
      bucket: 'mcp-anonymous',
      clientIp: context.clientIp,
      alsoRead: (tokenId) => sessionKeysToRead(tokenId, sessionId),
    });
    if (!authentication.ok) {
      rate = authentication.rate;
      // Refused `tools/call`s (401 with an existing token, 429, 403, dead session, batch over the limit) are still
      // logged (D5).
      if (authentication.knownToken)
        await recordRefused(authentication.knownToken, authentication.error, await bodyForLog());
      throw withResourceMetadata(authentication.error, request);
    }
    const { principal } = authentication;
    const token = { id: principal.tokenId, teamId: principal.teamId };
    const admission = consumeRateLimit(runtime.store, runtime.clock, 'mcp', principal.tokenId).then((state) => {
      rate = state;
    });
    admission.catch(() => undefined);
    const versionHeader = request.headers.get('mcp-protocol-version');
    const liveSession = liveSessionOf(authentication.items, runtime.clock.nowMs());
    // A call of one tool runs beside the counter's update (D4), statelessly (2026-07-28) or in a live session whose
    // version it names: a read until it answers or logs, a write until its handler would start (its idempotency claim
    // is written meanwhile); a refusal (logged by the call) replaces the answer. Everything else waits for it here.
    const listing = toolListingOf(request);
    const beside =
      method === 'POST' &&
      (modern || (Boolean(liveSession) && !unsupportedProtocolVersion(versionHeader))) &&
      principal.abilities.has('mcp:full') &&
      !(listing instanceof Response) &&
      runsBesideAdmission((await readBody()).parsed, listing);
    let reached = false;
    const admitCall = () => {
      reached = true;
      return admission;
    };
    /** A refused admission or gate: logged (unless the call reached its tool, which logs) and challenged. */
    const refuse = async (error: unknown, logged = false): Promise<never> => {
      if (!logged && error instanceof ProblemError) await recordRefused(token, error, await bodyForLog());
      throw withGateChallenge(error, principal, request);
    };
    // 403 before any JSON-RPC is read, even a malformed body.
    if (!beside) await admission.then(() => requireAbility(principal, 'mcp:full')).catch(refuse);

    // No server-initiated stream: GET and anything but POST/DELETE are 405.
    const notAllowed = methodNotAllowed(method);
    if (notAllowed) return notAllowed;
    if (method === 'DELETE') {
      if (!sessionHeader) return SESSION_HEADER_REQUIRED();
      const badVersion = unsupportedProtocolVersion(versionHeader);
      if (badVersion) return badVersion;
      // 404: unknown, malformed, expired (`MCP_SESSION_LIFETIME_SECONDS`), deleted, or another token's session.
      if (!liveSession || !sessionId) return SESSION_NOT_FOUND();
      await deleteSession(runtime, principal.tokenId, sessionId);
      return new Response(null, { status: 204 });
    }

    const body = await readBody();
    if (body.tooLarge) return mcpPayloadTooLarge();
    if (body.parsed === undefined) return jsonRpcError(400, -32700, 'Parse error: Invalid JSON');
    const { parsed } = body;
    const answer = modern
      ? await serveModernRequest(runtime, principal, requestId, request, parsed, beside ? admitCall : null)
      : await serveSessionRequest(beside ? admitCall : null);
    if (beside) await admission.catch((error: unknown) => refuse(error, reached));
    return answer;

    /**
     * Serves a POST of the 2025 revisions (`parsed`, its JSON body): `initialize` opens a session bound to the token,
     * anything else needs a live one. `callAdmission`: as `admission` for `buildMcpServer`.
     */
    async function serveSessionRequest(callAdmission: (() => Promise<void>) | null): Promise<Response> {
      // An absent `MCP-Protocol-Version` means the version negotiated at `initialize`.
      const effectiveVersion = versionHeader ?? liveSession?.protocol_version ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
      const invalid = invalidJsonRpc(parsed, effectiveVersion);
      if (invalid) return invalid;
      const messages = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{
        method?: unknown;
        id?: unknown;
        params?: unknown;
      }>;
      const initialize = messages.find((message) => message.method === 'initialize');
      if (!initialize) {
        // Without a session, a version this server does not speak is a later revision's stateless request.
        if (!sessionHeader)
          return unsupportedProtocolVersion(versionHeader, { message: parsed }) ?? SESSION_HEADER_REQUIRED();
        const badVersion = unsupportedProtocolVersion(versionHeader);
        if (badVersion) return badVersion;
        if (!liveSession) {
          await recordRefused(token, new ProblemError('NOT_FOUND', 'Session not found.'), parsed);
          return SESSION_NOT_FOUND();
        }
      }
      // `tools/list` opt-ins: `MCP-Tools-Filter: callable` | `?tools=callable`, `MCP-Read-Only: 1` | `?read_only=1`
      // (also refuses non-read-only calls); 400 for other values.
      if (listing instanceof Response) return listing;
      // DESIGN D4: each message of a batch counts as one call; the POST itself was counted above.
      if (messages.length > 1) {
        try {
          rate = await consumeRateLimit(runtime.store, runtime.clock, 'mcp', principal.tokenId, messages.length - 1);
        } catch (error) {
          if (error instanceof ProblemError) await recordRefused(token, error, parsed);
          throw error;
        }
      }

      const server = buildMcpServer(runtime, principal, requestId, listing, false, callAdmission);
      // Stateless JSON-response mode: the SDK answers 406 (Accept), 415 (Content-Type), -32601, -32602; a successful
      // `initialize` stores a session bound to the token.
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await connectMcpServer(server, transport);
      try {
        // The body was read above; the transport takes it parsed and never reads the request's own.
        const result = await transport.handleRequest(request, { parsedBody: parsed });
        if (!initialize && messages.length === 1)
          return withToolScopeChallenge(result, principal, messages[0], request);
        if (!initialize || result.status !== 200) return result;
        const answer = (await result.clone().json()) as { id?: unknown; result?: { protocolVersion?: unknown } };
        // Initialize failed: no session
        if (answer.id !== initialize.id || typeof answer.result?.protocolVersion !== 'string') return result;
        const newSessionId = await createSession(runtime, principal, answer.result.protocolVersion);
        return withHeaders(result, { 'MCP-Session-Id': newSessionId });
      } finally {
        await server.close().catch(() => undefined);
      }
    }
  }

  /** The POST body, read once: its text, its JSON (undefined when it is not JSON) and whether it is over the limit. */
  function readBody(): Promise<{ parsed: unknown; tooLarge: boolean }> {
    return (bodyRead ??= request.text().then((text) => {
      if (Buffer.byteLength(text) > MAX_MCP_BODY_BYTES) return { parsed: undefined, tooLarge: true };
      try {
        return { parsed: JSON.parse(text) as unknown, tooLarge: false };
      } catch {
        return { parsed: undefined, tooLarge: false };
      }
    }));
  }

  /**
   * True for a POST of the 2026-07-28 revision (the SDK's own classification of its JSON body); an
   * `MCP-Protocol-Version` naming no revision this server serves stays with the 2025 path, which refuses it.
   */
  async function isModernRequest(): Promise<boolean> {
    if (method !== 'POST') return false;
    const version = request.headers.get('mcp-protocol-version');
    if (version !== null && version !== MODERN_PROTOCOL_VERSION) return false;
    const { parsed } = await readBody();
    return parsed !== undefined && !(await isLegacyRequest(request, parsed));
  }

  /**
   * The POST body as parsed JSON for the activity log of a refused request; undefined when there is none or it is not
   * JSON.
   */
  async function bodyForLog(): Promise<unknown> {
    return method === 'POST' ? (await readBody()).parsed : undefined;
  }

  /** Writes the refused request's `tools/call` messages to the token's team log (DESIGN D5). */
  async function recordRefused(
    refusedToken: { id: string; teamId: string },
    error: ProblemError,
    body: unknown,
  ): Promise<void> {
    await recordRefusedToolCalls(runtime, {
      token: refusedToken,
      body,
      outcome: error.code,
      status: error.status,
      requestId,
      durationMs: Math.round(performance.now() - started),
    });
  }
}

/**
 * Serves one HTTP request of the tool server's API (DESIGN D5): the OAuth 2.0 Protected Resource
 * Metadata document (RFC 9728) at {@link PROTECTED_RESOURCE_METADATA_PATHS} — no token needed, with the
 * interface's CORS headers and `X-Request-Id` — and everything else through {@link handleMcpHttpRequest}. The OAuth
 * authorization server on the same API is a function of its own (`shared/oauth/lambda.ts`). Never throws.
 */
export async function handleMcpApiRequest(
  runtime: Runtime,
  request: Request,
  context: McpRequestContext,
): Promise<Response> {
  if (!PROTECTED_RESOURCE_METADATA_PATHS.includes(new URL(request.url).pathname))
    return handleMcpHttpRequest(runtime, request, context);
  return serveWithRequestId(request, context, () =>
    withHeaders(protectedResourceMetadataResponse(request), MCP_CORS_HEADERS),
  );
}
