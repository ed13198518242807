import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ProblemError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { eventToRequest, responseToResult, type ApiGatewayResult } from '../http/api-gateway.js';
import { handleMcpApiRequest, type McpRequestContext } from './http-handler.js';
import { mcpProblemResponse } from './responses.js';

/**
 * The MCP Lambda handler factory (DESIGN D5): API Gateway HTTP API v2 event → web `Request` →
 * {@link handleMcpApiRequest} (the tool server at `/mcp`, its protected-resource metadata at
 * `/.well-known/oauth-protected-resource[/mcp]`) → API Gateway result. The local server calls the same handler.
 * An event that cannot be turned into a web `Request` (e.g. a `Host` that makes no valid URL) is
 * answered 422 VALIDATION_FAILED with the tool server's CORS headers, so no answer ever lacks them.
 */
export function createMcpHandler(getRuntime: () => Runtime, options: Pick<McpRequestContext, 'onResponse'> = {}) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>()
    .use(httpHeaderNormalizer())
    .handler(async (event) => {
      const requestId = event.requestContext.requestId;
      let request: Request;
      try {
        request = eventToRequest(event);
      } catch {
        return responseToResult(
          mcpProblemResponse(
            new ProblemError(
              'VALIDATION_FAILED',
              'The HTTP request could not be read (check the Host header and the body encoding).',
            ),
            requestId,
          ),
        );
      }
      const response = await handleMcpApiRequest(getRuntime(), request, {
        clientIp: event.requestContext.http.sourceIp,
        requestId,
        onResponse: options.onResponse,
      });
      return responseToResult(response);
    });
}
