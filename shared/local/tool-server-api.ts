import { createToolServerApiHandler, type McpRequestContext } from '../mcp/edge.js';
import { handleMcpApiRequest } from '../mcp/http-handler.js';
import { isOAuthPath } from '../oauth/http-handler.js';
import { handleOAuthApiRequest } from '../oauth/lambda.js';
import type { Runtime } from '../runtime.js';

/**
 * A request to the tool server's API as API Gateway routes it on AWS: the OAuth paths to the authorization server's
 * function (`handleOAuthApiRequest`), every other path to the tool server's (`handleMcpApiRequest`). Never throws.
 */
export function handleToolServerApiRequest(
  runtime: Runtime,
  request: Request,
  context: McpRequestContext,
): Promise<Response> {
  return isOAuthPath(new URL(request.url).pathname)
    ? handleOAuthApiRequest(runtime, request, context)
    : handleMcpApiRequest(runtime, request, context);
}

/**
 * The local server's handler of the tool server's whole API: {@link handleToolServerApiRequest} on API Gateway
 * events.
 */
export function createToolServerApiRouter(getRuntime: () => Runtime, options: Pick<McpRequestContext, 'onResponse'>) {
  return createToolServerApiHandler(handleToolServerApiRequest, getRuntime, options);
}
