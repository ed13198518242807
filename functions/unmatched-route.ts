/** REST `$default` route Lambda: problem documents (404 / 405) for requests no route matched. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createUnmatchedRouteHandler } from '../shared/http/unmatched-route.js';

export const handler = createUnmatchedRouteHandler(awsRuntime);
