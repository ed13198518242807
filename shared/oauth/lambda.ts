import { createToolServerApiHandler, serveWithRequestId, type McpRequestContext } from '../mcp/edge.js';
import type { Runtime } from '../runtime.js';
import { handleOAuthRequest } from './http-handler.js';

/**
 * Serves one request of the OAuth authorization server (DESIGN D30: registration, authorization, token and revocation
 * endpoints and the server's metadata), with `X-Request-Id` and one `onResponse` line. Never throws.
 */
export function handleOAuthApiRequest(
  runtime: Runtime,
  request: Request,
  context: McpRequestContext,
): Promise<Response> {
  return serveWithRequestId(request, context, (requestId) =>
    handleOAuthRequest(runtime, request, { clientIp: context.clientIp, requestId }),
  );
}

/**
 * The OAuth authorization server's Lambda handler: {@link handleOAuthApiRequest} on the tool server's API, in a
 * function of its own, which holds no queue or key rights and carries neither the MCP SDK nor the tool handlers.
 */
export function createOAuthHandler(getRuntime: () => Runtime, options: Pick<McpRequestContext, 'onResponse'> = {}) {
  return createToolServerApiHandler(handleOAuthApiRequest, getRuntime, options);
}
