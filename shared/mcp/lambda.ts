import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Runtime } from '../runtime.js';
import { eventToRequest, responseToResult, type ApiGatewayResult } from '../http/api-gateway.js';
import { handleMcpHttpRequest, type McpRequestContext } from './http-handler.js';

/**
 * The MCP Lambda handler factory (DESIGN D5): API Gateway HTTP API v2 event → web `Request` →
 * {@link handleMcpHttpRequest} → API Gateway result. The local server calls the same handler.
 */
export function createMcpHandler(getRuntime: () => Runtime, options: Pick<McpRequestContext, 'onResponse'> = {}) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>()
    .use(httpHeaderNormalizer())
    .handler(async (event) => {
      const response = await handleMcpHttpRequest(getRuntime(), eventToRequest(event), {
        clientIp: event.requestContext.http.sourceIp,
        requestId: event.requestContext.requestId,
        onResponse: options.onResponse,
      });
      return responseToResult(response);
    });
}
