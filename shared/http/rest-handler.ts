import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { handlerOf } from '../domain/handlers.js';
import { ProblemError } from '../errors.js';
import { matchRoute, type OperationId } from '../operations/registry.js';
import type { Runtime } from '../runtime.js';
import type { ApiGatewayResult } from './api-gateway.js';
import { serveRestRequest, type ResponseLine, type RouteMatch } from './rest-pipeline.js';

export { MAX_BODY_BYTES } from './rest-pipeline.js';

/** Options of {@link handleRestRequest}. */
export interface RestHandlerOptions {
  /** `$default`: serve no operation (the AWS catch-all route answers only 404 / 405). */
  operationId?: string;
  /** Called once per request after the response is known (the local server logs a line). */
  onResponse?: (line: ResponseLine) => void;
}

/**
 * Routes a request by method and path over every operation of the registry (the local server, and the
 * `$default` route on AWS with `operationId: '$default'`, which serves no operation), then serves it
 * with the shared pipeline (`serveRestRequest`): unknown paths are NOT_FOUND, known paths with another
 * method METHOD_NOT_ALLOWED with `Allow`. Never throws.
 */
export async function handleRestRequest(
  runtime: Runtime,
  event: APIGatewayProxyEventV2,
  options: RestHandlerOptions = {},
): Promise<ApiGatewayResult> {
  const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const found = matchRoute(method, path);
  let match: RouteMatch | ProblemError;
  if (!found || ('operation' in found && options.operationId && found.operation.id !== options.operationId)) {
    match = new ProblemError('NOT_FOUND', `No route ${method} ${path}.`);
  } else if ('allowedMethods' in found) {
    match = new ProblemError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}.`, {
      headers: { Allow: found.allowedMethods.join(', ') },
    });
  } else {
    match = {
      operation: found.operation,
      handler: handlerOf(found.operation.id as OperationId),
      pathParameters: found.pathParameters,
    };
  }
  return serveRestRequest(runtime, event, match, options.onResponse);
}

/**
 * The handler of every REST operation in one function (the local server): middy with header
 * normalisation around {@link handleRestRequest}. `getRuntime` is called per invocation.
 */
export function createRestHandler(getRuntime: () => Runtime, options: RestHandlerOptions = {}) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>()
    .use(httpHeaderNormalizer())
    .handler(async (event) => handleRestRequest(getRuntime(), event, options));
}
