/** The OAuth authorization server Lambda (on the tool server's HTTP API: `/oauth/...` and its metadata). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { traced } from '../shared/aws/tracing.js';
import { createOAuthHandler } from '../shared/oauth/lambda.js';

/** The OAuth authorization server Lambda's handler: API Gateway (HTTP API) requests to `/oauth/...` and metadata. */
export const handler = traced(createOAuthHandler(awsRuntime));
