/**
 * The edge of the tool server's HTTP API, shared by its two functions (the tool server and the OAuth authorization
 * server, DESIGN D5, D30) without either one's code.
 *
 * @module
 */

import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { ProblemError } from '../errors.js';
import { eventToRequest, responseToResult, type ApiGatewayResult } from '../http/api-gateway.js';
import type { ResponseLine } from '../http/rest-pipeline.js';
import type { Runtime } from '../runtime.js';
import { mcpProblemResponse, withHeaders } from './responses.js';

/** Per-request facts the HTTP edge knows (API Gateway or the local server). */
export interface McpRequestContext {
  /** Client IP, for the unauthenticated bucket. */
  clientIp: string;
  requestId?: string;
  /** Called once per request with the final status (the local server logs a line). */
  onResponse?: (line: ResponseLine) => void;
}

/**
 * Answers a request the tool server's API serves without the MCP transport (the protected-resource metadata, the OAuth
 * authorization server): `X-Request-Id` on the answer, and one `onResponse` line for it. Never throws when `serve`
 * does not.
 */
export async function serveWithRequestId(
  request: Request,
  context: McpRequestContext,
  serve: (requestId: string) => Promise<Response> | Response,
): Promise<Response> {
  const started = performance.now();
  const requestId = context.requestId ?? randomUUID();
  const response = withHeaders(await serve(requestId), { 'X-Request-Id': requestId });
  context.onResponse?.({
    method: request.method.toUpperCase(),
    path: new URL(request.url).pathname,
    status: response.status,
    duration_ms: Math.round(performance.now() - started),
    request_id: requestId,
    operation: null,
  });
  return response;
}

/**
 * A Lambda handler of the tool server's HTTP API: API Gateway HTTP API v2 event → web `Request` → `serve` → API
 * Gateway result. The local server calls the same handlers. An event that cannot be turned into a web `Request` (e.g.
 * a `Host` that makes no valid URL) is answered 422 VALIDATION_FAILED with the tool server's CORS headers, so no answer
 * ever lacks them.
 */
export function createToolServerApiHandler(
  serve: (runtime: Runtime, request: Request, context: McpRequestContext) => Promise<Response>,
  getRuntime: () => Runtime,
  options: Pick<McpRequestContext, 'onResponse'> = {},
) {
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
      const response = await serve(getRuntime(), request, {
        clientIp: event.requestContext.http.sourceIp,
        requestId,
        onResponse: options.onResponse,
      });
      return responseToResult(response);
    });
}
