/**
 * The tool server on MCP 2026-07-28 (stateless): the v2 SDK client connects with `server/discover` (no `initialize`,
 * no `MCP-Session-Id`), lists and calls tools, and nothing is stored for it; `server/discover` names the server and
 * both eras; list results carry cache hints fitting the token; `Mcp-Method`/`Mcp-Name` headers that disagree with the
 * body are refused with -32020. The v1 SDK client keeps its session on the same endpoint.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import type { LocalService } from '../../shared/local/service.js';
import { keys } from '../../shared/store/keys.js';
import { startTestService } from '../support/local-service.js';
import { post } from '../support/mcp.js';
import { seedToken } from '../support/store.js';

const MODERN = '2026-07-28';
let service: LocalService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.stop();
});

/** The `_meta` envelope every 2026-07-28 request carries. */
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-modern-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** POSTs a 2026-07-28 request with the standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). */
function modernPost(
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : null;
  return post(
    service.mcpUrl,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } },
    {
      token,
      protocolVersion: MODERN,
      headers: { 'Mcp-Method': method, ...(name ? { 'Mcp-Name': name } : {}), ...headers },
    },
  );
}

async function mint(abilities = ABILITY_VALUES) {
  return seedToken(service.store, service.runtime.clock, { teamId: service.demoTeamId, abilities });
}

/** The sessions stored in the token's partition. */
async function sessionsOf(tokenId: string): Promise<number> {
  const { pk } = keys.session(tokenId, '');
  const { items } = await service.store.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
    ExpressionAttributeValues: { ':pk': pk, ':sk': 'MCP_SESSION#' },
  });
  return items.length;
}

describe('MCP 2026-07-28 (stateless)', () => {
  it('serves the v2 SDK client without initialize or a session, and stores nothing for it', async () => {
    const { token, id } = await mint();
    const sent: Array<{ method: string; session: string | null }> = [];
    const answers: Array<string | null> = [];
    const client = new ModernClient(
      { name: 'v2-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    const transport = new ModernTransport(new URL(service.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: async (url, init) => {
        const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }) : {};
        sent.push({ method: body.method ?? '', session: new Headers(init?.headers).get('mcp-session-id') });
        const response = await fetch(url, init);
        answers.push(response.headers.get('mcp-session-id'));
        return response;
      },
    });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getServerVersion()).toMatchObject({ name: 'membership-service' });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_DEFINITIONS.map((tool) => tool.name));
    const called = await client.callTool({ name: 'list_projects', arguments: { limit: 2 } });
    expect(called.isError).toBeFalsy();
    expect(called.structuredContent).toMatchObject({ data: expect.any(Array) });
    await client.close();

    expect(sent.map((request) => request.method)).toEqual(['server/discover', 'tools/list', 'tools/call']);
    expect(sent.every((request) => request.session === null)).toBe(true);
    expect(answers.every((session) => session === null)).toBe(true);
    expect(await sessionsOf(id)).toBe(0);
  });

  it('answers server/discover with the server, its revision and its capabilities, cacheable by everyone', async () => {
    const { token } = await mint();
    const response = await modernPost(token, 'server/discover');
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const { result } = response.json;
    // 2025-era versions are negotiated by `initialize`; discover lists the stateless revisions.
    expect(result.supportedVersions).toEqual([MODERN]);
    expect(result.capabilities).toMatchObject({ tools: {}, resources: {} });
    expect(result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'membership-service' });
    expect(result).toMatchObject({ resultType: 'complete', cacheScope: 'public', ttlMs: expect.any(Number) });
    expect(result.ttlMs).toBeGreaterThan(0);
  });

  it('marks a tools/list filtered by the token private and the full list public', async () => {
    const { token } = await mint(['mcp:full', 'project:view']);
    const full = await modernPost(token, 'tools/list');
    expect(full.json.result.tools).toHaveLength(TOOL_DEFINITIONS.length);
    expect(full.json.result).toMatchObject({ cacheScope: 'public' });
    const callable = await modernPost(token, 'tools/list', {}, { 'MCP-Tools-Filter': 'callable' });
    expect(callable.json.result.tools.length).toBeLessThan(TOOL_DEFINITIONS.length);
    expect(callable.json.result).toMatchObject({ cacheScope: 'private' });
    const resources = await modernPost(token, 'resources/list');
    expect(resources.json.result).toMatchObject({ cacheScope: 'public', resources: expect.any(Array) });
  });

  it('refuses Mcp-Method or Mcp-Name headers that disagree with the body with 400 and -32020', async () => {
    const { token, id } = await mint();
    const method = await modernPost(token, 'tools/list', {}, { 'Mcp-Method': 'resources/list' });
    expect(method.status).toBe(400);
    expect(method.json).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32020 } });
    const name = await modernPost(token, 'tools/call', { name: 'list_projects', arguments: {} }, { 'Mcp-Name': 'x' });
    expect(name.status).toBe(400);
    expect(name.json).toMatchObject({ error: { code: -32020 } });
    const agreeing = await modernPost(token, 'tools/call', { name: 'list_projects', arguments: {} });
    expect(agreeing.status).toBe(200);
    expect(agreeing.json.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { data: expect.any(Array) },
    });
    expect(await sessionsOf(id)).toBe(0);
  });

  it('answers a stateless request of a version it does not speak with -32022, its id and the versions server/discover lists', async () => {
    const { token } = await mint();
    const later = '2099-01-01';
    const answer = await post(
      service.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 301,
        method: 'tools/list',
        params: { _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': later } },
      },
      { token, protocolVersion: later, headers: { 'Mcp-Method': 'tools/list' } },
    );
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 301, error: { code: -32022, data: { requested: later } } });
    const discovered = await modernPost(token, 'server/discover', {});
    expect(answer.json.error.data.supported).toEqual(discovered.json.result.supportedVersions);
    expect(answer.json.error.data.supported).toEqual([MODERN]);
  });

  it('ignores an MCP-Session-Id on a 2026-07-28 request instead of looking it up', async () => {
    const { token } = await mint();
    const response = await modernPost(token, 'tools/list', {}, { 'MCP-Session-Id': crypto.randomUUID() });
    expect(response.status).toBe(200);
  });

  it('keeps the v1 SDK client on its session, bound to its token', async () => {
    const { token, id } = await mint();
    const client = new LegacyClient({ name: 'v1-test', version: '1.0.0' });
    const transport = new LegacyTransport(new URL(service.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await sessionsOf(id)).toBe(1);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(TOOL_DEFINITIONS.length);
    await transport.terminateSession();
    expect(await sessionsOf(id)).toBe(0);
    await client.close();
  });
});
