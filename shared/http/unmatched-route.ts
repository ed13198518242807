import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ProblemError } from '../errors.js';
import { matchRoute } from '../operations/registry.js';
import type { Runtime } from '../runtime.js';
import type { ApiGatewayResult } from './api-gateway.js';
import { serveRestRequest } from './rest-pipeline.js';

/**
 * The `$default` route's answer on AWS: every request no route matched gets the service's problem
 * documents — METHOD_NOT_ALLOWED (405, with `Allow` listing the methods of that path) or NOT_FOUND — before
 * authentication, touching no data. Imports the operation definitions only, never a handler.
 */
export function unmatchedRouteProblem(event: APIGatewayProxyEventV2): ProblemError {
  const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const found = matchRoute(method, path);
  if (found && 'allowedMethods' in found) return new ProblemError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}.`, { headers: { Allow: found.allowedMethods.join(', ') } });
  return new ProblemError('NOT_FOUND', `No route ${method} ${path}.`);
}

/** The `$default` Lambda handler (see {@link unmatchedRouteProblem}). */
export function createUnmatchedRouteHandler(getRuntime: () => Runtime) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>()
    .use(httpHeaderNormalizer())
    .handler(async (event) => serveRestRequest(getRuntime(), event, unmatchedRouteProblem(event)));
}
