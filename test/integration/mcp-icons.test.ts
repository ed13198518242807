/**
 * The tool server's icons (MCP `icons`, DESIGN D5) on both revisions: the server's own in `server/discover`
 * (2026-07-28) and in `initialize` (2025-11-25), and one per tool group on every tool of `tools/list`: an inline SVG,
 * the same for the tools of one group and different between groups. Through `handleMcpHttpRequest` on DynamoDB Local.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { operationById } from '../../shared/operations/registry.js';
import { mcpPost, mcpSession } from '../support/calls.js';
import { modernRpc } from '../support/mcp-raw.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let runtime: TestRuntime;
let token: string;

beforeAll(async () => {
  const clock = testClock({ secondsIntoMinute: 5 });
  runtime = await createTestRuntime({ clock });
  ({ token } = await seedTeam(runtime.store, clock));
});

/** One 2026-07-28 request with its standard headers (no extension declared); resolves with the JSON-RPC `result`. */
async function modern(method: string): Promise<any> {
  const answer = await modernRpc(
    runtime,
    token,
    method,
    {},
    { tasks: false, clientName: 'icons-test', clientIp: '198.51.100.50' },
  );
  expect(answer.status).toBe(200);
  return answer.result;
}

/** Every tool of `tools` carries one inline SVG icon, shared within its group and distinct across groups. */
function expectGroupIcons(tools: Array<{ name: string; icons?: Array<{ src: string; mimeType?: string }> }>): void {
  expect(tools).toHaveLength(TOOL_DEFINITIONS.length);
  const byGroup = new Map<string, string>();
  for (const tool of tools) {
    expect(tool.icons, tool.name).toEqual([
      { src: expect.stringMatching(/^data:image\/svg\+xml;base64,/), mimeType: 'image/svg+xml', sizes: ['any'] },
    ]);
    const svg = Buffer.from(tool.icons![0].src.split(',')[1], 'base64').toString();
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/);
    const definition = TOOL_DEFINITIONS.find((candidate) => candidate.name === tool.name)!;
    const group = operationById(definition.operationId).tag;
    expect(byGroup.get(group) ?? tool.icons![0].src, tool.name).toBe(tool.icons![0].src);
    byGroup.set(group, tool.icons![0].src);
  }
  expect(new Set(byGroup.values()).size).toBe(byGroup.size);
}

describe('icons', () => {
  it('2026-07-28: server/discover names the server with its icon, and every listed tool has its group icon', async () => {
    const discovered = await modern('server/discover');
    const serverInfo = discovered._meta['io.modelcontextprotocol/serverInfo'];
    expect(serverInfo).toMatchObject({ name: 'membership-service' });
    expect(serverInfo.icons).toEqual([
      { src: expect.stringMatching(/^data:image\/svg\+xml;base64,/), mimeType: 'image/svg+xml', sizes: ['any'] },
    ]);
    const listed = await modern('tools/list');
    expectGroupIcons(listed.tools);
    expect(listed.tools.map((tool: { icons: Array<{ src: string }> }) => tool.icons[0].src)).not.toContain(
      serverInfo.icons[0].src,
    );
  });

  it('2025-11-25: initialize names the server with the same icon, and tools/list carries the same tool icons', async () => {
    const initialized = await mcpPost(
      runtime,
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'icons', version: '1.0.0' } },
      },
      { token },
    );
    const discovered = await modern('server/discover');
    expect(initialized.json.result.serverInfo.icons).toEqual(
      discovered._meta['io.modelcontextprotocol/serverInfo'].icons,
    );
    const sessionId = await mcpSession(runtime, token);
    const listed = await mcpPost(runtime, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { token, sessionId });
    expectGroupIcons(listed.json.result.tools);
    expect(listed.json.result.tools).toEqual((await modern('tools/list')).tools);
  });
});
