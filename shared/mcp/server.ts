import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/tokens.js';
import { ENUM_RESOURCES } from '../catalogues/resources.js';
import { API_VERSION } from '../catalogues/version.js';
import type { Runtime } from '../runtime.js';
import { callTool, listToolsResult } from './tools.js';

/**
 * Builds the MCP server (official SDK) for one HTTP request of an authenticated principal: the 42
 * tools of the tool table (through the low-level request handlers, so the per-tool ability check runs
 * before argument validation and failures are problem documents, DESIGN D5) and the six read-only
 * `service://enums/*` resources (interface "Tool-server resources"). No prompts.
 */
export function buildMcpServer(runtime: Runtime, principal: Principal, requestId: string): McpServer {
  const server = new McpServer(
    { name: 'membership-service', title: 'Membership Service', version: API_VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions:
        'Tools manage the team of your token: projects, subscribers, plans, access codes, webhooks and the activity log. Each tool description names the ability it needs. Failures are results with isError and a problem document (code, hint, docs_url) in structuredContent. Enumerations are resources under service://enums/.',
    },
  );
  for (const resource of ENUM_RESOURCES) {
    server.registerResource(resource.name, resource.uri, { title: resource.title, description: resource.description, mimeType: resource.mimeType }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: resource.mimeType, text: JSON.stringify(resource.read()) }],
    }));
  }
  server.server.setRequestHandler(ListToolsRequestSchema, async () => listToolsResult() as never);
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const result = await callTool(runtime, principal, request.params.name, request.params.arguments, requestId);
    if (!result) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return result as never;
  });
  return server;
}
