// Lists the tool server's tools and calls one, with the official MCP SDK over streamable HTTP.
// Plain ESM with no build step, so it runs from any directory:
//
//   mkdir mcp-try && cd mcp-try
//   npm init -y && npm i @modelcontextprotocol/sdk
//   cp <this repo>/examples/mcp-client.mjs .
//   TOKEN=svc_live_... node mcp-client.mjs        # the demo token `npm start` printed
//
// MCP_URL overrides the tool server's address (default: the local server, http://127.0.0.1:3000/mcp).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const token = process.env.TOKEN;
if (!token) {
  console.error(
    'Set TOKEN to a token holding mcp:full (the demo token `npm start` printed), e.g. TOKEN=svc_live_... node mcp-client.mjs',
  );
  process.exit(2);
}
const url = new URL(process.env.MCP_URL ?? 'http://127.0.0.1:3000/mcp');

const client = new Client({ name: 'mcp-client-example', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
);
try {
  const { tools } = await client.listTools();
  console.log(`${tools.length} tools: ${tools.map((tool) => tool.name).join(', ')}`);
  const projects = await client.callTool({ name: 'list_projects', arguments: {} });
  console.log(JSON.stringify(projects.structuredContent, null, 2));
} finally {
  await client.close();
}
