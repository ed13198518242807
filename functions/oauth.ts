/** The OAuth authorization server Lambda (on the tool server's HTTP API: `/oauth/...` and its metadata). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { traced } from '../shared/aws/tracing.js';
import { createOAuthHandler } from '../shared/oauth/lambda.js';

export const handler = traced(createOAuthHandler(awsRuntime));
