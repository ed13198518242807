import type { Runtime } from '../runtime.js';
import { createToolServerApiHandler, type McpRequestContext } from './edge.js';
import { handleMcpApiRequest } from './http-handler.js';

/**
 * The MCP Lambda handler (DESIGN D5): {@link handleMcpApiRequest} (the tool server at `/mcp`, its protected-resource
 * metadata at `/.well-known/oauth-protected-resource[/mcp]`) behind {@link createToolServerApiHandler}.
 */
export function createMcpHandler(getRuntime: () => Runtime, options: Pick<McpRequestContext, 'onResponse'> = {}) {
  return createToolServerApiHandler(handleMcpApiRequest, getRuntime, options);
}
