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
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { revokeToken } from '../../shared/domain/tokens/repository.js';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { MCP_SESSION_LIFETIME_SECONDS } from '../../shared/mcp/sessions.js';
import { keys } from '../../shared/store/keys.js';
import {
  initializeMessage,
  openSession,
  post,
  send,
  TEST_PROTOCOL_VERSION,
  type RawMcpResponse,
} from '../support/mcp.js';
import {
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

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function expectRateHeaders(response: RawMcpResponse, limit: number): void {
  expect(response.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(Number(response.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
}

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
