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
import { randomBytes, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { consumeRateLimit } from '../../shared/limits/rate-limit.js';
import { revokeToken } from '../../shared/domain/tokens/repository.js';
import { ABILITY_VALUES, type Ability } from '../../shared/catalogues/abilities.js';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import type { ManualClock } from '../../shared/clock.js';
import type { LocalService } from '../../shared/local/service.js';
import { startTestService } from '../support/local-service.js';
import { seedTeam, seedToken, testClock } from '../support/store.js';
import { MCP_SESSION_LIFETIME_SECONDS } from '../../shared/mcp/sessions.js';
import { createMcpHandler } from '../../shared/mcp/lambda.js';
import { keys } from '../../shared/store/keys.js';
import {
  initializeMessage,
  openSession,
  post,
  send,
  TEST_PROTOCOL_VERSION,
  type RawMcpResponse,
} from '../support/mcp.js';

let clock: ManualClock;
let serviceA: LocalService;
let serviceB: LocalService;

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ping = (id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'ping' });
const toolCall = (name: string, args: Record<string, unknown>, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

function startInstance(tableName: string): Promise<LocalService> {
  return startTestService({ tableName, clock });
}

/** Mints a token of the demo team (default: every ability) with `seedToken`; returns the bearer string and token id. */
async function mint(abilities: readonly Ability[] = ABILITY_VALUES): Promise<{ token: string; id: string }> {
  const { token, id } = await seedToken(serviceA.store, clock, { teamId: serviceA.demoTeamId, abilities });
  return { token, id };
}

/** Moves the clock to the start of the next one-minute rate window. */
function startNextWindow(): void {
  clock.set((Math.floor(clock.nowMs() / 60_000) + 1) * 60_000);
}

/** The interface's table "CORS (tool server)", copied here (not imported) so the test checks the code against it. */
const INTERFACE_CORS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, GET, DELETE, OPTIONS',
  'Access-Control-Allow-Headers':
    'Authorization, Content-Type, Accept, MCP-Session-Id, MCP-Protocol-Version, Last-Event-ID',
  'Access-Control-Expose-Headers':
    'MCP-Session-Id, X-RateLimit-Limit, X-RateLimit-Remaining, Retry-After, WWW-Authenticate',
  'Access-Control-Max-Age': '86400',
};

/** The interface's CORS table, exactly, and nothing that would let a browser send credentials. */
function expectCors(response: RawMcpResponse): void {
  for (const [name, value] of Object.entries(INTERFACE_CORS)) expect(response.headers.get(name), name).toBe(value);
  const corsNames: string[] = [];
  response.headers.forEach((_value, name) => {
    if (name.startsWith('access-control-')) corsNames.push(name);
  });
  expect(corsNames.sort()).toEqual(
    Object.keys(INTERFACE_CORS)
      .map((name) => name.toLowerCase())
      .sort(),
  );
  expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  expect(response.headers.get('set-cookie')).toBeNull();
}

function expectRateHeaders(response: RawMcpResponse, limit: number): void {
  expect(response.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(Number(response.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
}

function expectProblem(response: RawMcpResponse, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.json).toMatchObject({
    status,
    code,
    type: expect.stringMatching(/^https:\/\//),
    title: expect.any(String),
    hint: expect.any(String),
    docs_url: expect.any(String),
    request_id: expect.any(String),
  });
}

function expectJsonRpcError(
  response: RawMcpResponse,
  status: number,
  code: number,
  id: string | number | null = null,
): void {
  expect(response.status).toBe(status);
  expect(response.json).toMatchObject({ jsonrpc: '2.0', error: { code, message: expect.any(String) }, id });
}

async function sdkClient(
  url: string,
  token: string,
  sessionId?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'mcp-protocol-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    sessionId,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

beforeAll(async () => {
  clock = testClock();
  const tableName = `mcp-${randomBytes(4).toString('hex')}`;
  serviceA = await startInstance(tableName);
  serviceB = await startInstance(tableName);
});

afterAll(async () => {
  await serviceA?.stop();
  await serviceB?.stop();
});

describe('CORS (interface "CORS (tool server)")', () => {
  it('answers preflight OPTIONS before authentication, with no token, with exactly the table', async () => {
    const response = await fetch(serviceA.mcpUrl, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type, mcp-session-id, mcp-protocol-version',
      },
    });
    const raw: RawMcpResponse = {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      json: undefined,
    };
    expect(raw.status).toBe(204);
    expectCors(raw);
    expect(raw.headers.get('www-authenticate')).toBeNull();
    // Not counted in any bucket: preflights are not requests "without a token".
    expect(raw.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('puts the same CORS headers on every answer: 200, 202, 204, 400, 401, 403, 404, 405', async () => {
    const { token } = await mint();
    const { token: gateless } = await mint(['project:view-any']);
    const initialized = await post(serviceA.mcpUrl, initializeMessage(), { token });
    const sessionId = initialized.headers.get('mcp-session-id')!;
    const answers = [
      initialized,
      await post(serviceA.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, { token, sessionId }),
      await post(serviceA.mcpUrl, '{oops', { token, sessionId }),
      await post(serviceA.mcpUrl, ping(), {}),
      await post(serviceA.mcpUrl, ping(), { token: gateless }),
      await post(serviceA.mcpUrl, ping(), { token, sessionId: randomUUID() }),
      await send(serviceA.mcpUrl, 'GET', { token, sessionId }),
      await send(serviceA.mcpUrl, 'DELETE', { token, sessionId }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 202, 400, 401, 403, 404, 405, 204]);
    for (const answer of answers) expectCors(answer);
  });
});

describe('authentication and the mcp:full gate (interface "Tool-server authorization", DESIGN D5)', () => {
  it('refuses a request carrying only a cookie, or no/malformed/revoked/non-bearer credentials, with 401 AUTHENTICATION_REQUIRED; 5 per minute per IP, then 429 in a separate bucket', async () => {
    const revocable = await mint();
    expect((await post(serviceA.mcpUrl, initializeMessage(), { token: revocable.token })).status).toBe(200);
    await revokeToken(serviceA.store, clock, serviceA.demoTeamId, revocable.id);

    startNextWindow();
    const attempts: RawMcpResponse[] = [
      await post(serviceA.mcpUrl, initializeMessage(), {}),
      await post(serviceA.mcpUrl, initializeMessage(), {
        headers: { Cookie: `token=${serviceA.demoToken}; Authorization=Bearer ${serviceA.demoToken}` },
      }),
      await post(serviceB.mcpUrl, initializeMessage(), { headers: { Authorization: 'Bearer not-a-token' } }),
      await post(serviceB.mcpUrl, initializeMessage(), { token: revocable.token }),
      await post(serviceA.mcpUrl, initializeMessage(), {
        headers: { Authorization: `Basic ${Buffer.from(`user:${serviceA.demoToken}`).toString('base64')}` },
      }),
    ];
    attempts.forEach((attempt, index) => {
      expectProblem(attempt, 401, 'AUTHENTICATION_REQUIRED');
      expect(attempt.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
      expect(attempt.headers.get('x-ratelimit-limit')).toBe('5');
      // Both instances count in the same DynamoDB bucket.
      expect(attempt.headers.get('x-ratelimit-remaining')).toBe(String(4 - index));
      expectCors(attempt);
    });

    const sixth = await post(serviceB.mcpUrl, initializeMessage(), {});
    expectProblem(sixth, 429, 'RATE_LIMITED');
    expect(sixth.headers.get('retry-after')).toBe('60');
    expect(sixth.headers.get('x-ratelimit-limit')).toBe('5');
    expect(sixth.headers.get('x-ratelimit-remaining')).toBe('0');
    expectCors(sixth);

    // Preflight is still answered; a valid token from this IP is served from its own bucket (only
    // failed authentications count in the IP's, DESIGN D4); requests without one wait for the next window.
    expect((await send(serviceA.mcpUrl, 'OPTIONS')).status).toBe(204);
    const { token } = await mint();
    const authenticated = await post(serviceA.mcpUrl, initializeMessage(), { token });
    expect(authenticated.status).toBe(200);
    expect(authenticated.headers.get('x-ratelimit-limit')).toBe('120');
    expectProblem(await post(serviceA.mcpUrl, initializeMessage(), {}), 429, 'RATE_LIMITED');

    clock.advance(60_000);
    expectProblem(await post(serviceA.mcpUrl, initializeMessage(), {}), 401, 'AUTHENTICATION_REQUIRED');
  });

  it('answers 403 TOKEN_MISSING_ABILITY without mcp:full before any JSON-RPC is read, whatever the body or method', async () => {
    const { token } = await mint(['project:view-any', 'project:view', 'activity:read']);
    const answers = [
      await post(serviceA.mcpUrl, initializeMessage(), { token }),
      await post(serviceA.mcpUrl, '{this is not json', { token }),
      await post(serviceA.mcpUrl, [], { token }),
      await post(
        serviceA.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'no/such/method' },
        { token, sessionId: randomUUID() },
      ),
      await post(serviceA.mcpUrl, ping(), { token, protocolVersion: '1999-01-01' }),
      await send(serviceA.mcpUrl, 'GET', { token }),
      await send(serviceA.mcpUrl, 'DELETE', { token, sessionId: randomUUID() }),
    ];
    for (const answer of answers) {
      expectProblem(answer, 403, 'TOKEN_MISSING_ABILITY');
      expect(answer.json.detail).toContain('mcp:full');
      expectRateHeaders(answer, 120);
      expectCors(answer);
    }
  });

  it('checks each tool\u2019s own ability after the gate: an isError result with the problem document', async () => {
    const { token } = await mint(['mcp:full', 'project:view-any']);
    const sessionId = await openSession(serviceA.mcpUrl, token);
    const allowed = await post(serviceA.mcpUrl, toolCall('list_projects', {}), { token, sessionId });
    expect(allowed.status).toBe(200);
    expect(allowed.json.result.isError).toBeFalsy();
    const refused = await post(serviceA.mcpUrl, toolCall('list_subscribers', { project_id: randomUUID() }), {
      token,
      sessionId,
    });
    expect(refused.status).toBe(200);
    expect(refused.json.result).toMatchObject({
      isError: true,
      structuredContent: { code: 'TOKEN_MISSING_ABILITY', status: 403 },
    });
    expect(JSON.parse(refused.json.result.content[0].text)).toEqual(refused.json.result.structuredContent);
  });
});

describe('sessions (DESIGN D5)', () => {
  it('stores the session in DynamoDB bound to the token; any instance serves it (initialize on A, call and end on B)', async () => {
    const { token, id: tokenId } = await mint();
    const initialized = await post(serviceA.mcpUrl, initializeMessage(7), { token, protocolVersion: null });
    expect(initialized.status).toBe(200);
    expect(initialized.json).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { protocolVersion: TEST_PROTOCOL_VERSION, serverInfo: { name: 'membership-service' } },
    });
    const sessionId = initialized.headers.get('mcp-session-id')!;
    expect(sessionId).toMatch(UUID_PATTERN);

    const stored = await serviceA.store.document.send(
      new GetCommand({
        TableName: serviceA.store.tableName,
        Key: keys.session(tokenId, sessionId),
        ConsistentRead: true,
      }),
    );
    expect(stored.Item).toMatchObject({
      token_id: tokenId,
      team_id: serviceA.demoTeamId,
      protocol_version: TEST_PROTOCOL_VERSION,
      expires_at: Math.floor(clock.nowMs() / 1000) + MCP_SESSION_LIFETIME_SECONDS,
    });

    const listed = await post(
      serviceB.mcpUrl,
      { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
      { token, sessionId },
    );
    expect(listed.status).toBe(200);
    expect(listed.json.id).toBe('list');
    expect(listed.json.result.tools).toHaveLength(TOOL_DEFINITIONS.length);

    // A real client: connect on A, continue the same session on B without re-initializing, end it on B.
    const onA = await sdkClient(serviceA.mcpUrl, token);
    const onB = await sdkClient(serviceB.mcpUrl, token, onA.transport.sessionId);
    expect(onB.transport.sessionId).toBe(onA.transport.sessionId);
    expect((await onB.client.listResources()).resources).toHaveLength(6);
    await onB.transport.terminateSession();
    await expect(onA.client.ping()).rejects.toThrow(/404|Session not found/);
    await onA.client.close();
    await onB.client.close();
  });

  it('answers 404 for an unknown, foreign (another token\u2019s), ended or expired session, and 400 without the header', async () => {
    const owner = await mint();
    const other = await mint();
    const sessionId = await openSession(serviceA.mcpUrl, owner.token);

    expectJsonRpcError(await post(serviceA.mcpUrl, ping(), { token: owner.token }), 400, -32000);
    expectJsonRpcError(await send(serviceA.mcpUrl, 'DELETE', { token: owner.token }), 400, -32000);
    expectJsonRpcError(
      await post(serviceA.mcpUrl, ping(), { token: owner.token, sessionId: randomUUID() }),
      404,
      -32001,
    );
    expectJsonRpcError(
      await post(serviceA.mcpUrl, ping(), { token: owner.token, sessionId: 'not-even-a-uuid' }),
      404,
      -32001,
    );

    // Same team, every ability, but not the token that created the session.
    const foreign = await post(serviceB.mcpUrl, ping(), { token: other.token, sessionId });
    expectJsonRpcError(foreign, 404, -32001);
    expectCors(foreign);
    expectJsonRpcError(await send(serviceB.mcpUrl, 'DELETE', { token: other.token, sessionId }), 404, -32001);
    // ... and that attempt did not end it for its owner.
    expect((await post(serviceA.mcpUrl, ping(), { token: owner.token, sessionId })).status).toBe(200);

    // Ended by DELETE (on the other instance): gone everywhere.
    const ended = await send(serviceB.mcpUrl, 'DELETE', { token: owner.token, sessionId });
    expect(ended.status).toBe(204);
    expectCors(ended);
    expectJsonRpcError(await post(serviceA.mcpUrl, ping(), { token: owner.token, sessionId }), 404, -32001);
    expectJsonRpcError(await send(serviceA.mcpUrl, 'DELETE', { token: owner.token, sessionId }), 404, -32001);

    // Expiry: alive one second before 24 hours, gone one second after.
    const expiring = await openSession(serviceA.mcpUrl, owner.token);
    clock.advance((MCP_SESSION_LIFETIME_SECONDS - 1) * 1000);
    expect((await post(serviceB.mcpUrl, ping(), { token: owner.token, sessionId: expiring })).status).toBe(200);
    clock.advance(2_000);
    expectJsonRpcError(await post(serviceB.mcpUrl, ping(), { token: owner.token, sessionId: expiring }), 404, -32001);
    expectJsonRpcError(await send(serviceA.mcpUrl, 'DELETE', { token: owner.token, sessionId: expiring }), 404, -32001);
  });

  it('does not create a session when initialize fails', async () => {
    const { token } = await mint();
    const failed = await post(
      serviceA.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } },
      { token },
    );
    expect(failed.status).toBe(200);
    expectJsonRpcError(failed, 200, -32602, 1);
    expect(failed.json.error.message).toContain('params.protocolVersion');
    expect(failed.headers.get('mcp-session-id')).toBeNull();
  });

  it('answers GET with 405 (no server-initiated stream) and other methods with 405 too', async () => {
    const { token } = await mint();
    const sessionId = await openSession(serviceA.mcpUrl, token);
    const get = await send(serviceA.mcpUrl, 'GET', { token, sessionId, headers: { Accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, DELETE, OPTIONS');
    expect(get.headers.get('content-type')).not.toMatch(/event-stream/);
    const put = await send(serviceA.mcpUrl, 'PUT', { token, sessionId });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toContain('POST');
  });
});

describe('MCP-Protocol-Version (MCP "Transports → Protocol version header")', () => {
  it('negotiates at initialize: a supported version is echoed, an unknown one gets the latest', async () => {
    const { token } = await mint();
    const older = await post(serviceA.mcpUrl, initializeMessage(1, '2025-06-18'), { token, protocolVersion: null });
    expect(older.json.result.protocolVersion).toBe('2025-06-18');
    const unknown = await post(serviceA.mcpUrl, initializeMessage(1, '1999-01-01'), { token, protocolVersion: null });
    expect(unknown.status).toBe(200);
    expect(unknown.json.result.protocolVersion).toBe(TEST_PROTOCOL_VERSION);
  });

  it('refuses an unsupported version with 400, accepts any supported one, and assumes the negotiated one when absent', async () => {
    const { token } = await mint();
    const sessionId = await openSession(serviceA.mcpUrl, token);
    const unsupported = await post(serviceA.mcpUrl, ping(), { token, sessionId, protocolVersion: '2099-01-01' });
    expectJsonRpcError(unsupported, 400, -32000);
    expect(unsupported.json.error.message).toContain('2099-01-01');
    expectCors(unsupported);
    expectJsonRpcError(
      await send(serviceA.mcpUrl, 'DELETE', { token, sessionId, protocolVersion: 'garbage' }),
      400,
      -32000,
    );
    // The refused DELETE did not end the session.
    expect((await post(serviceA.mcpUrl, ping(2), { token, sessionId, protocolVersion: '2025-03-26' })).json).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: {},
    });
    expect((await post(serviceA.mcpUrl, ping(3), { token, sessionId, protocolVersion: null })).json).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: {},
    });
  });
});

describe('JSON-RPC messages (JSON-RPC 2.0 §5, MCP "Transports")', () => {
  it('answers -32700 for invalid JSON, -32600 for a non-JSON-RPC message, -32601 for an unknown method, -32602 for an unknown tool', async () => {
    const { token } = await mint();
    const sessionId = await openSession(serviceA.mcpUrl, token);
    expectJsonRpcError(
      await post(serviceA.mcpUrl, '{"jsonrpc": "2.0", "id": 1, "method": ', { token, sessionId }),
      400,
      -32700,
    );
    expectJsonRpcError(await post(serviceA.mcpUrl, '', { token, sessionId }), 400, -32700);
    expectJsonRpcError(await post(serviceA.mcpUrl, { hello: 'world' }, { token, sessionId }), 400, -32600);
    expectJsonRpcError(await post(serviceA.mcpUrl, { id: 5, method: 'ping' }, { token, sessionId }), 400, -32600, 5);
    expectJsonRpcError(
      await post(serviceA.mcpUrl, { jsonrpc: '2.0', id: null, method: 'ping' }, { token, sessionId }),
      400,
      -32600,
    );
    expectJsonRpcError(await post(serviceA.mcpUrl, 42, { token, sessionId }), 400, -32600);
    // Validated before the session: a malformed message without a session is still -32600.
    expectJsonRpcError(
      await post(serviceA.mcpUrl, { jsonrpc: '1.0', id: 'x', method: 'ping' }, { token }),
      400,
      -32600,
      'x',
    );

    expectJsonRpcError(
      await post(serviceA.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'prompts/list' }, { token, sessionId }),
      200,
      -32601,
      9,
    );
    const unknownTool = await post(serviceA.mcpUrl, toolCall('no_such_tool', {}, 10), { token, sessionId });
    expectJsonRpcError(unknownTool, 200, -32602, 10);
    expect(unknownTool.json.error.message).toBe('Unknown tool: no_such_tool');
    expectJsonRpcError(
      await post(
        serviceA.mcpUrl,
        { jsonrpc: '2.0', id: 11, method: 'resources/read', params: { uri: 'service://enums/nope' } },
        { token, sessionId },
      ),
      200,
      -32002,
      11,
    );
    // Params that do not match the method: -32602 naming the field (the SDK alone would say -32603).
    const noName = await post(
      serviceA.mcpUrl,
      { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { arguments: {} } },
      { token, sessionId },
    );
    expectJsonRpcError(noName, 200, -32602, 12);
    expect(noName.json.error.message).toContain('params.name');
    expectJsonRpcError(
      await post(
        serviceA.mcpUrl,
        { jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'get_team', arguments: 'x' } },
        { token, sessionId },
      ),
      200,
      -32602,
      13,
    );
    expectJsonRpcError(
      await post(
        serviceA.mcpUrl,
        { jsonrpc: '2.0', id: 14, method: 'resources/read', params: {} },
        { token, sessionId },
      ),
      200,
      -32602,
      14,
    );

    // Notifications and responses are accepted with 202 and no body.
    const notification = await post(
      serviceA.mcpUrl,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } },
      { token, sessionId },
    );
    expect(notification.status).toBe(202);
    expect(notification.text).toBe('');
    // Wrong Accept or Content-Type: the transport's own 406 / 415.
    expect(
      (await post(serviceA.mcpUrl, ping(), { token, sessionId, headers: { Accept: 'application/json' } })).status,
    ).toBe(406);
    expect(
      (await post(serviceA.mcpUrl, ping(), { token, sessionId, headers: { 'Content-Type': 'text/plain' } })).status,
    ).toBe(415);
  });

  it('refuses batches in protocol versions without batching (2025-06-18 on) and answers them in 2025-03-26 sessions', async () => {
    const { token } = await mint();
    const sessionId = await openSession(serviceA.mcpUrl, token);
    const batch = [
      ping('a'),
      { jsonrpc: '2.0', id: 'b', method: 'no/such/method' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ];
    expectJsonRpcError(await post(serviceA.mcpUrl, batch, { token, sessionId }), 400, -32600);
    expectJsonRpcError(
      await post(serviceA.mcpUrl, batch, { token, sessionId, protocolVersion: '2025-06-18' }),
      400,
      -32600,
    );

    // A client that negotiated 2025-03-26 (and sends no version header: the negotiated one applies).
    const legacy = await post(serviceA.mcpUrl, initializeMessage(1, '2025-03-26'), { token, protocolVersion: null });
    expect(legacy.json.result.protocolVersion).toBe('2025-03-26');
    const legacySession = legacy.headers.get('mcp-session-id')!;
    const answered = await post(serviceB.mcpUrl, batch, { token, sessionId: legacySession, protocolVersion: null });
    expect(answered.status).toBe(200);
    expect(answered.json).toEqual([
      { jsonrpc: '2.0', id: 'a', result: {} },
      { jsonrpc: '2.0', id: 'b', error: { code: -32601, message: 'Method not found' } },
    ]);
    expectJsonRpcError(
      await post(serviceB.mcpUrl, [], { token, sessionId: legacySession, protocolVersion: null }),
      400,
      -32600,
    );
    expectJsonRpcError(
      await post(serviceB.mcpUrl, [ping('c'), { nope: true }], {
        token,
        sessionId: legacySession,
        protocolVersion: null,
      }),
      400,
      -32600,
    );
  });
});

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
      expect(metadata.authorization_servers).toEqual([new URL(serviceA.mcpUrl).origin]); // its own OAuth server (DESIGN D30)
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
