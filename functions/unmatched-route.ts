/** REST `$default` route Lambda: problem documents (404 / 405) for requests no route matched. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createUnmatchedRouteHandler, type RouteBinding } from '../shared/http/unmatched-route.js';

/** Every operation's method and path, written in at build time (`lib/function-code.ts`, esbuild `define`). */
declare const REST_ROUTE_BINDINGS: readonly RouteBinding[];

/** The `$default` route Lambda's handler: API Gateway (HTTP API) requests that no REST route matched. */
export const handler = createUnmatchedRouteHandler(awsRuntime, REST_ROUTE_BINDINGS);
