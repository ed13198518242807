/**
 * The checks of a tool-server request before the MCP SDK sees it (DESIGN D5): the JSON-RPC shape of a POST
 * body, the `MCP-Protocol-Version` header, the `tools/list` opt-ins, and their JSON-RPC error answers.
 */
import { specTypeSchemas, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { ToolListing } from './tools.js';
import { jsonRpcError } from './responses.js';

/**
 * The opt-ins of `tools/list` and `tools/call` (DESIGN D5): the `MCP-Tools-Filter` header or `tools`
 * query parameter (`callable` | `all`) and the `MCP-Read-Only` header or `read_only` query parameter
 * (`1`/`true` | `0`/`false`). Either place turns an option on. Returns a 400 JSON-RPC error response for
 * any other value (a mistyped read-only switch must not silently allow writes).
 */
export function toolListingOf(request: Request): ToolListing | Response {
  const query = new URL(request.url).searchParams;
  const values = (header: string, parameter: string) =>
    [request.headers.get(header), query.get(parameter)]
      .filter((value): value is string => value !== null)
      .map((value) => value.trim().toLowerCase());
  const filters = values('mcp-tools-filter', 'tools');
  const readOnly = values('mcp-read-only', 'read_only');
  const badFilter = filters.find((value) => value !== 'callable' && value !== 'all');
  if (badFilter !== undefined)
    return jsonRpcError(
      400,
      -32000,
      `Bad Request: MCP-Tools-Filter (or ?tools=) must be "callable" or "all", not "${badFilter.slice(0, 40)}"`,
    );
  const badReadOnly = readOnly.find((value) => !['1', 'true', '0', 'false'].includes(value));
  if (badReadOnly !== undefined)
    return jsonRpcError(
      400,
      -32000,
      `Bad Request: MCP-Read-Only (or ?read_only=) must be 1 or 0, not "${badReadOnly.slice(0, 40)}"`,
    );
  return {
    callableOnly: filters.includes('callable'),
    readOnly: readOnly.some((value) => value === '1' || value === 'true'),
  };
}

/** The stateless protocol revision, served per request without `initialize` or sessions. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Protocol versions from which JSON-RPC batching is gone (MCP 2025-06-18 removed it). */
const FIRST_VERSION_WITHOUT_BATCHING = '2025-06-18';

/**
 * 405 for an HTTP method the tool server does not serve (it sends no server-initiated stream, so GET too), with the
 * `Allow` header; null for POST and DELETE.
 */
export function methodNotAllowed(method: string): Response | null {
  if (method === 'POST' || method === 'DELETE') return null;
  const get = method === 'GET';
  const message = get
    ? 'Method not allowed: this server sends no server-initiated stream; POST JSON-RPC messages.'
    : 'Method not allowed.';
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), {
    status: 405,
    headers: {
      Allow: get ? 'POST, DELETE, OPTIONS' : 'POST, GET, DELETE, OPTIONS',
      'Content-Type': 'application/json',
    },
  });
}

/** 400: a message other than `initialize` (or a DELETE) came without the `Mcp-Session-Id` header. */
export const SESSION_HEADER_REQUIRED = () =>
  jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
/** 404: the `Mcp-Session-Id` names no live session of this token. */
export const SESSION_NOT_FOUND = () => jsonRpcError(404, -32001, 'Session not found');

/** JSON-RPC error of the 2026-07-28 revision for a request naming a protocol version the server does not speak. */
const UNSUPPORTED_PROTOCOL_VERSION_CODE = -32022;

/**
 * 400 for an `MCP-Protocol-Version` header naming a version this server does not support; null otherwise (absent is
 * fine). `data` lists the versions the client may retry with (`supported`) and echoes `requested`. A request of a
 * session (2025 revisions) gets -32000 as the SDK answers it, listing every version served; one without a session
 * (`stateless`: a later revision's client) gets the 2026-07-28 code -32022, its own `id`, and the versions a request
 * without a session may name, as `server/discover` lists them (2025 revisions are negotiated by `initialize`).
 */
export function unsupportedProtocolVersion(header: string | null, stateless?: { message: unknown }): Response | null {
  const served = [...new Set([MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS])];
  if (header === null || served.includes(header)) return null;
  const supported = stateless ? [MODERN_PROTOCOL_VERSION] : served;
  return jsonRpcError(
    400,
    stateless ? UNSUPPORTED_PROTOCOL_VERSION_CODE : -32000,
    `Bad Request: Unsupported protocol version: ${header} (supported versions: ${supported.join(', ')})`,
    stateless ? usableId(stateless.message) : null,
    { supported, requested: header },
  );
}

function isNotJsonRpcMessage(message: unknown): boolean {
  return specTypeSchemas.JSONRPCMessage['~standard'].validate(message).issues !== undefined;
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
export function invalidJsonRpc(parsed: unknown, protocolVersion: string): Response | null {
  if (Array.isArray(parsed)) {
    if (protocolVersion >= FIRST_VERSION_WITHOUT_BATCHING) {
      return jsonRpcError(
        400,
        -32600,
        `Invalid Request: JSON-RPC batches are not supported in protocol version ${protocolVersion}; send one message per POST`,
      );
    }
    if (parsed.length === 0) return jsonRpcError(400, -32600, 'Invalid Request: empty batch');
    const invalid = (parsed as unknown[]).find((message) => isNotJsonRpcMessage(message));
    if (invalid !== undefined)
      return jsonRpcError(
        400,
        -32600,
        'Invalid Request: a batch member is not a JSON-RPC 2.0 message',
        usableId(invalid),
      );
    return null;
  }
  if (isNotJsonRpcMessage(parsed))
    return jsonRpcError(
      400,
      -32600,
      'Invalid Request: not a JSON-RPC 2.0 request, notification or response',
      usableId(parsed),
    );
  return null;
}
