import { TASKS_EXTENSION_ID_V2 as TASKS_EXTENSION } from '@modelcontextprotocol/ext-tasks/core/v2';
import { handleMcpHttpRequest } from '../../shared/mcp/http-handler.js';
import type { Runtime } from '../../shared/runtime.js';

/** The protocol revision the raw requests speak. */
export const MODERN = '2026-07-28';
/** The tool server's URL in the raw requests (its host is one the handler serves). */
export const MCP_URL = 'https://mcp.test/mcp';

/** The answer to one raw request: the HTTP status and the JSON-RPC body's `result` or `error`. */
export interface RawAnswer {
  status: number;
  result?: any;
  error?: { code: number; message: string; data?: any };
}

/**
 * The `_meta` envelope of a 2026-07-28 request from client `clientName`, declaring the Tasks extension unless `tasks`
 * is false.
 */
function modernEnvelope(clientName: string, tasks = true) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {},
  };
}

/**
 * Sends one raw 2026-07-28 request with its standard headers (`Mcp-Method`, and `Mcp-Name` from the params' `name` or
 * `taskId`) with bearer `token` to `runtime`'s tool server through `handleMcpHttpRequest`, from `clientIp`.
 */
export async function modernRpc(
  runtime: Runtime,
  token: string,
  method: string,
  params: Record<string, unknown>,
  options: { tasks?: boolean; clientName: string; clientIp: string },
): Promise<RawAnswer> {
  const name = params.name ?? params.taskId;
  const request = new Request(MCP_URL, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': method,
      ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: modernEnvelope(options.clientName, options.tasks) },
    }),
  });
  const response = await handleMcpHttpRequest(runtime, request, { clientIp: options.clientIp });
  return { status: response.status, ...((await response.json()) as object) };
}
