/** The MCP tool-server Lambda (streamable HTTP behind its own HTTP API). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createMcpHandler } from '../shared/mcp/lambda.js';

export const handler = createMcpHandler(awsRuntime);
