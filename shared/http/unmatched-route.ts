import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ProblemError } from '../errors.js';
import type { HttpMethod } from '../operations/definition.js';
import type { Runtime } from '../runtime.js';
import type { ApiGatewayResult } from './api-gateway.js';
import { serveRestRequest } from './rest-pipeline.js';
import { matchPath } from './route-match.js';

/** A route as the `$default` Lambda knows it: method and path only (generated at synth from the registry). */
export interface RouteBinding {
  method: HttpMethod;
  path: string;
}

/**
 * The `$default` route's answer on AWS: every request no route matched gets the service's problem
 * documents — METHOD_NOT_ALLOWED (405, with `Allow` listing the methods of that path) or NOT_FOUND — before
 * authentication, touching no data. It knows the routes as plain bindings, never the operations' schemas.
 */
function unmatchedRouteProblem(routes: readonly RouteBinding[], event: APIGatewayProxyEventV2): ProblemError {
  const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const found = matchPath(routes, (route) => route, method, path);
  if (found && 'allowedMethods' in found)
    return new ProblemError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}.`, {
      headers: { Allow: found.allowedMethods.join(', ') },
    });
  return new ProblemError('NOT_FOUND', `No route ${method} ${path}.`);
}

/**
 * The `$default` Lambda handler (see {@link unmatchedRouteProblem}); `routes` are every operation's method and path.
 */
export function createUnmatchedRouteHandler(getRuntime: () => Runtime, routes: readonly RouteBinding[]) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>()
    .use(httpHeaderNormalizer())
    .handler(async (event) => serveRestRequest(getRuntime(), event, unmatchedRouteProblem(routes, event)));
}
