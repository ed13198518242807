/**
 * The tool server's fixed answers and their headers: the body limit, the interface's CORS headers, problem documents
 * and the 413 for a body over the limit (DESIGN D1, D5).
 */
import { toProblem } from '../errors.js';

/** Largest accepted JSON-RPC body, in bytes (1 MiB). */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/** CORS of the tool server, exactly as the interface's table ("CORS (tool server)"). */
export const MCP_CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, GET, DELETE, OPTIONS',
  'Access-Control-Allow-Headers':
    'Authorization, Content-Type, Accept, MCP-Session-Id, MCP-Protocol-Version, Last-Event-ID',
  'Access-Control-Expose-Headers':
    'MCP-Session-Id, X-RateLimit-Limit, X-RateLimit-Remaining, Retry-After, WWW-Authenticate',
  'Access-Control-Max-Age': '86400',
};

/**
 * A problem-document response (DESIGN D1) for a request that never reached
 * the tool server's handler (e.g. an API Gateway event that is not a valid HTTP request), with the
 * interface's CORS headers and `X-Request-Id`. A {@link ProblemError} keeps its code; anything else is
 * INTERNAL_ERROR (500).
 */
export function mcpProblemResponse(error: unknown, requestId: string): Response {
  return withHeaders(problemResponse(error, requestId), { ...MCP_CORS_HEADERS, 'X-Request-Id': requestId });
}

/** A problem document (D1) as a Response with its status and headers, plus `extraHeaders`. */
export function problemResponse(
  error: unknown,
  requestId: string,
  extraHeaders: Record<string, string> = {},
): Response {
  const { problem, headers } = toProblem(error, requestId);
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { 'Content-Type': 'application/problem+json', ...headers, ...extraHeaders },
  });
}

/** `response` with `headers` set on it and any `Set-Cookie` removed (the tool server never sets cookies). */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  const merged = new Headers(response.headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  merged.delete('set-cookie');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: merged });
}

/** The tool server's answer to a body over {@link MAX_MCP_BODY_BYTES}: 413 with JSON-RPC error -32000. */
export function mcpPayloadTooLarge(): Response {
  return jsonRpcError(413, -32000, `Request body larger than ${MAX_MCP_BODY_BYTES} bytes`);
}

/**
 * The tool server's 413 for a request whose body the HTTP edge stopped reading at
 * {@link MAX_MCP_BODY_BYTES} (the local server, DESIGN D5): the same answer the tool server's handler
 * gives, with the interface's CORS headers and `X-Request-Id`.
 */
export function mcpPayloadTooLargeResponse(requestId: string): Response {
  return withHeaders(mcpPayloadTooLarge(), { ...MCP_CORS_HEADERS, 'X-Request-Id': requestId });
}

/** A JSON-RPC error answer (`id` null unless the offending message had a usable id; `data` only when given). */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
  data?: Record<string, unknown>,
): Response {
  const error = data === undefined ? { code, message } : { code, message, data };
  return new Response(JSON.stringify({ jsonrpc: '2.0', error, id }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}
