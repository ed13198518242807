/** The public pages' Lambda (DESIGN D26, D27): the join pages and the subscriber portal of the REST API's domain. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createPublicPagesHandler } from '../shared/public-pages/router.js';
import { traced } from '../shared/aws/tracing.js';

/** The public pages Lambda's handler: API Gateway (HTTP API) requests to `/join`, `/portal` and unsubscribe pages. */
export const handler = traced(createPublicPagesHandler(awsRuntime));
