/**
 * The tool server's HTTP protocol end to end (interface "Tool server", "Tool-server authorization",
 * "CORS (tool server)", "Limits"; DESIGN D1, D4, D5), through the real local server
 * (`startLocalService`, the same Lambda handler as on AWS) on the run's DynamoDB Local.
 *
 * Two service instances share one pair of tables, as two Lambda instances share DynamoDB: sessions
 * and rate counters must work across them. Time is a manual clock shared by both instances, so
 * session expiry and rate windows are tested without waiting.
 *
 * Raw requests (test/support/mcp.ts) exercise what a well-behaved client never sends; the MCP SDK
 * `Client` over `StreamableHTTPClientTransport` proves real clients work.
 */

import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { consumeRateLimit } from '../../shared/limits/rate-limit.js';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { seedTeam, seedToken } from '../support/store.js';
import { createMcpHandler } from '../../shared/mcp/lambda.js';
import { initializeMessage, openSession, post, send, type RawMcpResponse } from '../support/mcp.js';
import {
  INTERFACE_CORS,
  clock,
  expectCors,
  expectJsonRpcError,
  expectProblem,
  mint,
  ping,
  sdkClient,
  serviceA,
  serviceB,
  startNextWindow,
  toolCall,
  useMcpProtocolFixture,
} from '../support/fixtures/mcp-protocol.js';

useMcpProtocolFixture();

describe('rate limits (interface "Limits", DESIGN D4)', () => {
  it('admits exactly 120 requests per minute per token across instances; the 121st gets 429 with Retry-After and X-RateLimit-*', async () => {
    const { token, id } = await mint();
    const { token: bystander } = await mint();
    startNextWindow();
    clock.advance(15_000);
    // 100 of the token's 120 taken in one step (the same conditional ADD, 100 units): the race is for the last 20.
    await consumeRateLimit(serviceA.store, clock, 'mcp', id, 100);
    // 30 concurrent requests, split over the two instances; GET is rate-limited, then answered 405.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) => send(index % 2 ? serviceB.mcpUrl : serviceA.mcpUrl, 'GET', { token })),
    );
    const admitted = answers.filter((answer) => answer.status === 405);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(admitted).toHaveLength(20);
    expect(limited).toHaveLength(10);
    // Each admitted request saw a distinct remaining count: 19 down to 0.
    expect(admitted.map((answer) => Number(answer.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, index) => index),
    );
    for (const answer of admitted) expect(answer.headers.get('x-ratelimit-limit')).toBe('120');
    for (const answer of limited) {
      expectProblem(answer, 429, 'RATE_LIMITED');
      expect(answer.headers.get('retry-after')).toBe('45');
      expect(answer.headers.get('x-ratelimit-limit')).toBe('120');
      expect(answer.headers.get('x-ratelimit-remaining')).toBe('0');
      expectCors(answer);
    }
    // Another token is not affected.
    expect((await post(serviceA.mcpUrl, initializeMessage(), { token: bystander })).status).toBe(200);

    // After Retry-After seconds the next window admits again.
    clock.advance(45_000);
    const next = await send(serviceB.mcpUrl, 'GET', { token });
    expect(next.status).toBe(405);
    expect(next.headers.get('x-ratelimit-remaining')).toBe('119');
  });

  it('puts X-RateLimit-Limit and X-RateLimit-Remaining on every authenticated answer', async () => {
    const { token } = await mint();
    startNextWindow();
    const initialized = await post(serviceA.mcpUrl, initializeMessage(), { token });
    const sessionId = initialized.headers.get('mcp-session-id')!;
    const answers = [
      initialized,
      await post(serviceA.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, { token, sessionId }),
      await post(serviceA.mcpUrl, toolCall('get_team', {}), { token, sessionId }),
      await post(serviceA.mcpUrl, '[', { token, sessionId }),
      await post(serviceA.mcpUrl, ping(), { token, sessionId: randomUUID() }),
      await send(serviceA.mcpUrl, 'GET', { token, sessionId }),
      await send(serviceA.mcpUrl, 'DELETE', { token, sessionId }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 202, 200, 400, 404, 405, 204]);
    answers.forEach((answer, index) => {
      expect(answer.headers.get('x-ratelimit-limit')).toBe('120');
      expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(119 - index));
    });
  });
});

describe('tools (DESIGN D5, D12)', () => {
  it('declares outputSchema and the readOnly/destructive/idempotent annotations; results carry structuredContent', async () => {
    const { client } = await sdkClient(serviceA.mcpUrl, (await mint()).token);
    try {
      const { tools, nextCursor } = await client.listTools();
      expect(tools).toHaveLength(TOOL_DEFINITIONS.length);
      expect(nextCursor).toBeUndefined();
      for (const tool of tools) {
        expect(tool.outputSchema?.type, tool.name).toBe('object');
        expect(tool.inputSchema.type, tool.name).toBe('object');
        expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe('boolean');
        expect(typeof tool.annotations?.destructiveHint, tool.name).toBe('boolean');
        expect(typeof tool.annotations?.idempotentHint, tool.name).toBe('boolean');
      }
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      expect(byName.get('list_projects')?.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
      });
      expect(byName.get('delete_webhook_endpoint')?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
      });
      expect(byName.get('create_project')?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });

      // The SDK client validates structuredContent against the declared outputSchema.
      const team = await client.callTool({ name: 'get_team', arguments: {} });
      expect(team.isError).toBeFalsy();
      expect(team.structuredContent).toMatchObject({ id: serviceA.demoTeamId });
      expect(JSON.parse((team.content as Array<{ text: string }>)[0].text)).toEqual(team.structuredContent);
    } finally {
      await client.close();
    }
  });

  it('pages list_projects with limit and an opaque cursor (27 projects: 10 + 10 + 7; default page 25)', async () => {
    // A team of its own: the demo team already holds the seeded demo project.
    const { token } = await seedTeam(serviceA.store, clock);
    startNextWindow();
    const { client } = await sdkClient(serviceA.mcpUrl, token);
    try {
      const created = new Set<string>();
      for (let index = 0; index < 27; index += 1) {
        const result = await client.callTool({
          name: 'create_project',
          arguments: { name: `Paging ${index}`, platform_type: 'discord' },
        });
        expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
        created.add((result.structuredContent as { id: string }).id);
      }
      const seen: string[] = [];
      const pageSizes: number[] = [];
      let cursor: string | undefined;
      do {
        const result = await client.callTool({
          name: 'list_projects',
          arguments: cursor ? { limit: 10, cursor } : { limit: 10 },
        });
        const page = result.structuredContent as { data: Array<{ id: string }>; next_cursor: string | null };
        pageSizes.push(page.data.length);
        seen.push(...page.data.map((project) => project.id));
        if (page.next_cursor !== null) {
          expect(typeof page.next_cursor).toBe('string');
          expect(page.next_cursor).not.toMatch(/TEAM#|PROJECT#|[{}"]/);
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect(pageSizes).toEqual([10, 10, 7]);
      expect(new Set(seen).size).toBe(27);
      expect(new Set(seen)).toEqual(created);

      const firstDefault = (await client.callTool({ name: 'list_projects', arguments: {} })).structuredContent as {
        data: unknown[];
        next_cursor: string | null;
      };
      expect(firstDefault.data).toHaveLength(25);
      expect(firstDefault.next_cursor).toEqual(expect.any(String));
    } finally {
      await client.close();
    }
  });

  // A failed call's structuredContent is the problem document (DESIGN D1); the SDK Client validates
  // structuredContent even on errors, so each outputSchema admits the result or the problem document.
  it('lets the SDK Client see a per-tool refusal as an isError result', async () => {
    const { client } = await sdkClient(serviceA.mcpUrl, (await mint(['mcp:full', 'project:view-any'])).token);
    try {
      await client.listTools(); // the client validates results only against schemas it has listed
      const refused = await client.callTool({ name: 'list_subscribers', arguments: { project_id: randomUUID() } });
      expect(refused).toMatchObject({ isError: true, structuredContent: { code: 'TOKEN_MISSING_ABILITY' } });
    } finally {
      await client.close();
    }
  });
});

describe('the Lambda edge (API Gateway HTTP API v2 events)', () => {
  function event(overrides: {
    headers: Record<string, string>;
    cookies?: string[];
    body?: string;
  }): APIGatewayProxyEventV2 {
    return {
      version: '2.0',
      routeKey: 'ANY /mcp',
      rawPath: '/mcp',
      rawQueryString: '',
      headers: overrides.headers,
      cookies: overrides.cookies,
      requestContext: {
        accountId: 'test',
        apiId: 'test',
        domainName: 'mcp.example',
        domainPrefix: 'mcp',
        http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '198.51.100.7', userAgent: 'test' },
        requestId: randomUUID(),
        routeKey: 'ANY /mcp',
        stage: '$default',
        time: new Date(clock.nowMs()).toISOString(),
        timeEpoch: clock.nowMs(),
      },
      body: overrides.body,
      isBase64Encoded: false,
    };
  }
  const context = { callbackWaitsForEmptyEventLoop: false } as Context;

  it('never uses API Gateway cookies as credentials', async () => {
    const handler = createMcpHandler(() => serviceA.runtime);
    const result = await handler(
      event({
        headers: {
          host: 'mcp.example',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        cookies: [`token=${serviceA.demoToken}`, `authorization=Bearer ${serviceA.demoToken}`],
        body: JSON.stringify(initializeMessage()),
      }),
      context,
    );
    expect(result.statusCode).toBe(401);
    expect(JSON.parse(result.body)).toMatchObject({ code: 'AUTHENTICATION_REQUIRED' });
    expect(result.headers['www-authenticate']).toMatch(/^Bearer\b/);
    expect(result.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers an event that is not a valid HTTP request with a problem document that still carries CORS', async () => {
    const handler = createMcpHandler(() => serviceA.runtime);
    const result = await handler(
      event({ headers: { host: 'not a host name', authorization: `Bearer ${serviceA.demoToken}` }, body: '{}' }),
      context,
    );
    expect(result.statusCode).toBe(422);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(result.body)).toMatchObject({ code: 'VALIDATION_FAILED' });
    for (const [name, value] of Object.entries(INTERFACE_CORS))
      expect(result.headers[name.toLowerCase()], name).toBe(value);
  });
});

describe('hardening', () => {
  it('answers 404, never 500, for an over-long or malformed MCP-Session-Id (DESIGN D5)', async () => {
    const { token } = await mint();
    await openSession(serviceA.mcpUrl, token);
    for (const sessionId of [
      'x'.repeat(2_000),
      `${randomUUID()}${'0'.repeat(1_100)}`,
      randomUUID().toUpperCase(),
      'MCP_SESSION#../../etc',
      '%00%ff',
    ]) {
      const posted = await post(serviceA.mcpUrl, ping(), { token, sessionId });
      expectJsonRpcError(posted, 404, -32001);
      expectCors(posted);
      expectJsonRpcError(await send(serviceA.mcpUrl, 'DELETE', { token, sessionId }), 404, -32001);
    }
  });

  it('counts each message of a JSON-RPC batch against the mcp bucket, all or none (DESIGN D4)', async () => {
    const { token, id: tokenId } = await mint();
    startNextWindow();
    const legacy = await post(serviceA.mcpUrl, initializeMessage(1, '2025-03-26'), { token, protocolVersion: null });
    const sessionId = legacy.headers.get('mcp-session-id')!;
    expect(legacy.headers.get('x-ratelimit-remaining')).toBe('119');

    const hundred = Array.from({ length: 100 }, (_, index) => toolCall('get_team', {}, index + 1));
    const answered = await post(serviceB.mcpUrl, hundred, { token, sessionId, protocolVersion: null });
    expect(answered.status).toBe(200);
    expect(answered.json).toHaveLength(100);
    expect(answered.headers.get('x-ratelimit-remaining')).toBe('19');

    // 20 more messages do not fit in the 18 left after this POST: the whole batch is refused, no tool runs.
    const twenty = Array.from({ length: 20 }, (_, index) => toolCall('get_team', {}, `x${index}`));
    const refused = await post(serviceA.mcpUrl, twenty, { token, sessionId, protocolVersion: null });
    expectProblem(refused, 429, 'RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('18');
    const log = await listActivity(serviceA.store, serviceA.demoTeamId, { limit: 200, token_id: tokenId });
    expect(log.data.filter((entry) => entry.outcome === 'ok')).toHaveLength(100);
    expect(log.data.filter((entry) => entry.outcome === 'RATE_LIMITED')).toHaveLength(20);

    // Exactly what is left still fits; then the bucket is empty.
    const eighteen = Array.from({ length: 18 }, (_, index) => ping(`p${index}`));
    const last = await post(serviceA.mcpUrl, eighteen, { token, sessionId, protocolVersion: null });
    expect(last.status).toBe(200);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
    expectProblem(
      await post(serviceA.mcpUrl, ping(), { token, sessionId, protocolVersion: null }),
      429,
      'RATE_LIMITED',
    );
  });

  it('points every 401 at its OAuth protected-resource metadata (RFC 9728), served without a token', async () => {
    const unauthenticated = await post(serviceA.mcpUrl, initializeMessage(), {});
    expectProblem(unauthenticated, 401, 'AUTHENTICATION_REQUIRED');
    const challenge = unauthenticated.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer realm="membership", resource_metadata="[^"]+"$/);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1];
    expect(metadataUrl).toBe(`${new URL(serviceA.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp`);

    for (const url of [metadataUrl, `${new URL(serviceA.mcpUrl).origin}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(url);
      const raw: RawMcpResponse = {
        status: response.status,
        headers: response.headers,
        text: '',
        json: await response.json(),
      };
      expect(raw.status).toBe(200);
      expectCors(raw);
      const metadata = OAuthProtectedResourceMetadataSchema.parse(raw.json);
      expect(metadata.resource).toBe(serviceA.mcpUrl);
      expect(metadata.bearer_methods_supported).toEqual(['header']);
      // Its own OAuth server (DESIGN D30)
      expect(metadata.authorization_servers).toEqual([new URL(serviceA.mcpUrl).origin]);
      expect(metadata.scopes_supported).toContain('mcp:full');
    }
  });

  it('lists only the tools the token can call with MCP-Tools-Filter: callable or ?tools=callable (DESIGN D5)', async () => {
    const { token } = await mint(['mcp:full', 'project:view-any', 'project:view', 'project:create']);
    const sessionId = await openSession(serviceA.mcpUrl, token);
    const list = { jsonrpc: '2.0', id: 'list', method: 'tools/list' };
    const all = await post(serviceA.mcpUrl, list, { token, sessionId });
    expect(all.json.result.tools).toHaveLength(TOOL_DEFINITIONS.length);
    const byHeader = await post(serviceA.mcpUrl, list, {
      token,
      sessionId,
      headers: { 'MCP-Tools-Filter': 'callable' },
    });
    const byQuery = await post(`${serviceA.mcpUrl}?tools=callable`, list, { token, sessionId });
    for (const answer of [byHeader, byQuery]) {
      expect(answer.status).toBe(200);
      expectCors(answer);
      const names = answer.json.result.tools.map((tool: { name: string }) => tool.name);
      // get_team (the smoke test) needs no ability beyond the gate (DESIGN D2), so it is callable too.
      expect(names).toEqual(expect.arrayContaining(['get_team', 'list_projects', 'get_project', 'create_project']));
      expect(names).not.toContain('list_subscribers');
      for (const tool of answer.json.result.tools)
        expect(tool.description, tool.name).toMatch(
          /Requires (ability `(project:view-any|project:view|project:create)`|no ability beyond `mcp:full`)\.$/,
        );
    }
    // A project-scoped token cannot call team-wide tools, so they are not listed for it either.
    const creator = (await mint()).token;
    const project = await post(
      serviceA.mcpUrl,
      toolCall('create_project', { name: 'Scoped listing', platform_type: 'discord' }),
      {
        token: creator,
        sessionId: await openSession(serviceA.mcpUrl, creator),
      },
    );
    const scoped = await seedToken(serviceA.store, clock, {
      teamId: serviceA.demoTeamId,
      abilities: ['mcp:full', 'activity:read', 'project:view-any'],
      projectIds: [project.json.result.structuredContent.id],
    });
    const scopedSession = await openSession(serviceA.mcpUrl, scoped.token);
    const scopedNames = (
      await post(`${serviceA.mcpUrl}?tools=callable`, list, { token: scoped.token, sessionId: scopedSession })
    ).json.result.tools.map((tool: { name: string }) => tool.name);
    expect(scopedNames).toContain('list_projects');
    expect(scopedNames).not.toContain('get_activity_log');
    // A value the filter does not take is refused, not ignored.
    expectJsonRpcError(
      await post(serviceA.mcpUrl, list, { token, sessionId, headers: { 'MCP-Tools-Filter': 'writable' } }),
      400,
      -32000,
    );
  });

  it('lists and runs only readOnlyHint tools with MCP-Read-Only: 1 or ?read_only=1 (DESIGN D5)', async () => {
    const { token } = await mint();
    const sessionId = await openSession(serviceA.mcpUrl, token);
    const list = { jsonrpc: '2.0', id: 'list', method: 'tools/list' };
    for (const [url, headers] of [
      [serviceA.mcpUrl, { 'MCP-Read-Only': '1' }],
      [`${serviceA.mcpUrl}?read_only=1`, {}],
    ] as const) {
      const listed = await post(url, list, { token, sessionId, headers });
      expectCors(listed);
      const tools = listed.json.result.tools as Array<{ name: string; annotations: { readOnlyHint: boolean } }>;
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.length).toBeLessThan(TOOL_DEFINITIONS.length);
      for (const tool of tools) expect(tool.annotations.readOnlyHint, tool.name).toBe(true);
      expect(tools.map((tool) => tool.name)).toContain('list_projects');

      const write = await post(
        url,
        toolCall('create_project', { name: 'Not in read-only mode', platform_type: 'discord' }),
        { token, sessionId, headers },
      );
      expect(write.json.result).toMatchObject({ isError: true, structuredContent: { code: 'TOKEN_MISSING_ABILITY' } });
      expect(write.json.result.structuredContent.detail).toContain('read-only');
      const read = await post(url, toolCall('list_projects', {}), { token, sessionId, headers });
      expect(read.json.result.isError).toBeFalsy();
    }
    // The SDK client with ?read_only=1 in its URL sees the same.
    const { client } = await sdkClient(`${serviceA.mcpUrl}?read_only=1&tools=callable`, token, sessionId);
    try {
      const { tools } = await client.listTools();
      expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
    } finally {
      await client.close();
    }
    expectJsonRpcError(
      await post(serviceA.mcpUrl, list, { token, sessionId, headers: { 'MCP-Read-Only': 'yes' } }),
      400,
      -32000,
    );
  });

  it('publishes schemas without type arrays or empty additionalProperties, which the SDK client still validates results against (MCP Inspector --strict)', async () => {
    const { client } = await sdkClient(serviceA.mcpUrl, (await mint()).token);
    try {
      const { tools } = await client.listTools();
      const findings: string[] = [];
      const walk = (node: unknown, path: string): void => {
        if (Array.isArray(node)) return node.forEach((child, index) => walk(child, `${path}[${index}]`));
        if (!node || typeof node !== 'object') return;
        const schema = node as Record<string, unknown>;
        if (Array.isArray(schema.type)) findings.push(`${path}.type`);
        if (
          schema.additionalProperties &&
          typeof schema.additionalProperties === 'object' &&
          Object.keys(schema.additionalProperties).length === 0
        )
          findings.push(`${path}.additionalProperties`);
        for (const [key, value] of Object.entries(schema)) walk(value, `${path}.${key}`);
      };
      for (const tool of tools) {
        walk(tool.inputSchema, `${tool.name}.inputSchema`);
        walk(tool.outputSchema, `${tool.name}.outputSchema`);
      }
      expect(findings).toEqual([]);
      const projects = await client.callTool({ name: 'list_projects', arguments: {} }); // next_cursor: null validates
      expect(projects.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
