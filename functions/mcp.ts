/** The MCP tool-server Lambda (streamable HTTP behind its own HTTP API). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createMcpHandler } from '../shared/mcp/lambda.js';
import { traced } from '../shared/aws/tracing.js';

/** The MCP tool server Lambda's handler: API Gateway (HTTP API) requests to the MCP path and its resource metadata. */
export const handler = traced(createMcpHandler(awsRuntime));
