/**
 * The activity log of tool calls the tool server refused before any tool ran (interface "Tool-server
 * authorization" 3, DESIGN D5: every `tools/call` is recorded whatever its outcome): refused by the
 * `mcp` rate limit (a batch included), by the `mcp:full` gate, by authentication with a token whose
 * secret matched (revoked), or for a session that is not live. Requests whose token names no team or
 * carries a wrong secret (treated alike, so nothing tells whether a token id exists), or
 * that the IP's anonymous bucket stops before any token is verified, are attributed to no team.
 * Through `handleMcpHttpRequest` (what the Lambda and the local server run) on DynamoDB Local, with a
 * manual clock.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import type { ActivityEntry } from '../../shared/domain/activity/schema.js';
import { revokeToken } from '../../shared/domain/tokens/repository.js';
import { consumeRateLimit } from '../../shared/limits/rate-limit.js';
import { handleMcpHttpRequest } from '../../shared/mcp/http-handler.js';
import { toRaw, type RawMcpResponse } from '../support/mcp.js';
import { mcpPost, mcpSession, rest, toolsCall } from '../support/calls.js';
import { modernRpc } from '../support/mcp-raw.js';
import {
  createTestRuntime,
  seedTeam,
  seedToken,
  testClock,
  traceRoundTrips,
  type TestRuntime,
} from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let teamId: string;
let token: string;
let tokenId: string;

beforeEach(async () => {
  clock = testClock({ secondsIntoMinute: 15 });
  runtime = await createTestRuntime({ clock });
  const seeded = await seedTeam(runtime.store, clock);
  teamId = seeded.team.id;
  token = seeded.token;
  tokenId = seeded.principal.tokenId;
});

/** Every activity entry of the team (newest first), optionally of one token. */
async function activity(tokenFilter?: string): Promise<ActivityEntry[]> {
  const entries: ActivityEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await listActivity(runtime.store, teamId, { limit: 100, cursor, token_id: tokenFilter });
    entries.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return entries;
}

/** POSTs `body` in protocol 2025-03-26 (batches allowed) with a session. */
async function legacyPost(body: unknown, sessionId: string, bearer = token): Promise<RawMcpResponse> {
  const request = new Request('https://mcp.test/mcp', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${bearer}`,
      'MCP-Session-Id': sessionId,
    },
    body: JSON.stringify(body),
  });
  return toRaw(await handleMcpHttpRequest(runtime, request, { clientIp: '198.51.100.30' }));
}

describe('refused tool calls are in the activity log (DESIGN D5)', () => {
  it('records a call refused by the mcp rate limit, with outcome RATE_LIMITED, and every call of a 40-call race for the last 20', async () => {
    const sessionId = await mcpSession(runtime, token); // 2 of the 120
    await consumeRateLimit(runtime.store, clock, 'mcp', tokenId, 98); // 100 of the 120 used, none of them a tool call
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        mcpPost(runtime, toolsCall(index + 1, 'get_team'), { token, sessionId }),
      ),
    );
    expect(replies.filter((reply) => reply.status === 429)).toHaveLength(20);
    const entries = await activity(tokenId);
    expect(entries).toHaveLength(40);
    expect(entries.filter((entry) => entry.outcome === 'ok')).toHaveLength(20);
    const refused = entries.filter((entry) => entry.outcome === 'RATE_LIMITED');
    expect(refused).toHaveLength(20);
    for (const entry of refused)
      expect(entry).toMatchObject({ token_id: tokenId, surface: 'mcp', operation: 'get_team', status: 429 });
    // Each entry carries the request id the caller saw.
    const limitedIds = new Set(
      replies.filter((reply) => reply.status === 429).map((reply) => reply.headers.get('x-request-id')),
    );
    expect(new Set(refused.map((entry) => entry.request_id))).toEqual(limitedIds);
  });

  it('runs a 2025 session’s call of a read-only tool beside the rate limit, and any other call after it', async () => {
    const sessionId = await mcpSession(runtime, token);
    const { runtime: traced, events } = traceRoundTrips(runtime);
    const read = await mcpPost(traced, toolsCall(1, 'get_team'), { token, sessionId });
    expect(read.status).toBe(200);
    // The team's read is sent before the counter's update answers: one round trip instead of two.
    expect(events.indexOf('get TEAM sent')).toBeLessThan(events.indexOf('update RATE answered'));
    // A session that is not live waits for the counter, so its 404 never comes before a 429.
    events.length = 0;
    const dead = await mcpPost(traced, toolsCall(2, 'get_team'), { token, sessionId: randomUUID() });
    expect(dead.status).toBe(404);
    expect(events).toContain('update RATE answered');
  });

  it('runs a 2026-07-28 call of a read-only tool beside the rate limit: 20 of 40 racing for the last 20 get the 429 alone, every call logged once', async () => {
    const { runtime: traced, events } = traceRoundTrips(runtime);
    const call = (client: TestRuntime) =>
      modernRpc(client, token, 'tools/call', { name: 'get_team', arguments: {} }, options);
    const options = { clientName: 'beside', clientIp: '198.51.100.31', tasks: false };
    expect((await call(traced)).result.structuredContent).toMatchObject({ id: teamId });
    // The team's read is sent before the counter's update answers: one round trip instead of two.
    expect(events.indexOf('get TEAM sent')).toBeLessThan(events.indexOf('update RATE answered'));
    // 100 of the 120 used: the race is for the last 20
    await consumeRateLimit(runtime.store, clock, 'mcp', tokenId, 99);
    const answers = await Promise.all(Array.from({ length: 40 }, () => call(runtime)));
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited).toHaveLength(20);
    for (const answer of limited) {
      expect(answer).toMatchObject({ code: 'RATE_LIMITED' });
      expect(answer).not.toHaveProperty('result');
    }
    const entries = await activity(tokenId);
    expect(entries).toHaveLength(41);
    expect(entries.filter((entry) => entry.outcome === 'RATE_LIMITED' && entry.status === 429)).toHaveLength(20);
    expect(entries.filter((entry) => entry.outcome === 'ok')).toHaveLength(21);
  });

  it('runs a write tool’s call beside the rate limit until its handler: the idempotency claim is sent before the counter answers, and a refused call changes nothing but the log', async () => {
    const { runtime: traced, events } = traceRoundTrips(runtime);
    const options = { clientName: 'beside', clientIp: '198.51.100.32', tasks: false };
    const create = (client: TestRuntime, name: string) =>
      modernRpc(
        client,
        token,
        'tools/call',
        { name: 'create_project', arguments: { name, platform_type: 'discord', idempotency_key: randomUUID() } },
        options,
      );
    expect((await create(traced, 'Beside')).result.structuredContent).toMatchObject({ name: 'Beside' });
    // One round trip instead of two: the key's claim does not wait for the counter.
    expect(events.indexOf('put IDEMPOTENCY sent')).toBeLessThan(events.indexOf('update RATE answered'));
    await consumeRateLimit(runtime.store, clock, 'mcp', tokenId, 119); // the first call used 1 of the 120
    expect(await create(runtime, 'Refused')).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    const entries = await activity(tokenId);
    expect(entries.map((entry) => [entry.operation, entry.outcome, entry.status])).toEqual([
      ['create_project', 'RATE_LIMITED', 429],
      ['create_project', 'ok', 200],
    ]);
    const projects = await rest(runtime, { method: 'GET', path: '/v1/projects', token });
    expect((projects.json as { data: Array<{ name: string }> }).data.map((project) => project.name)).toEqual([
      'Beside',
    ]);
  });

  it('records every tools/call of a batch refused because it does not fit in the bucket', async () => {
    const initialized = await toRaw(
      await handleMcpHttpRequest(
        runtime,
        new Request('https://mcp.test/mcp', {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            Authorization: `Bearer ${token}`,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } },
          }),
        }),
        { clientIp: '198.51.100.30' },
      ),
    );
    const sessionId = initialized.headers.get('mcp-session-id')!;
    await consumeRateLimit(runtime.store, clock, 'mcp', tokenId, 110); // 1 + 110 used: 9 left
    const batch = [
      toolsCall(1, 'get_team'),
      toolsCall(2, 'list_projects'),
      { jsonrpc: '2.0', id: 3, method: 'ping' },
      ...Array.from({ length: 8 }, (_, index) => toolsCall(10 + index, 'get_team')),
    ];
    const refused = await legacyPost(batch, sessionId);
    expect(refused.status).toBe(429);
    const entries = await activity(tokenId);
    expect(entries).toHaveLength(10); // the tools/call messages, not the ping
    expect(entries.every((entry) => entry.outcome === 'RATE_LIMITED' && entry.status === 429)).toBe(true);
    expect(entries.map((entry) => entry.operation).sort()).toEqual(
      [...Array(9).fill('get_team'), 'list_projects'].sort(),
    );
  });

  it('records a call refused at the mcp:full gate, with outcome TOKEN_MISSING_ABILITY', async () => {
    const gateless = await seedToken(runtime.store, clock, { teamId, abilities: ['team:view'] });
    const reply = await mcpPost(runtime, toolsCall(1, 'get_team'), { token: gateless.token, sessionId: randomUUID() });
    expect(reply.status).toBe(403);
    expect(await activity(gateless.id)).toMatchObject([
      {
        token_id: gateless.id,
        surface: 'mcp',
        operation: 'get_team',
        outcome: 'TOKEN_MISSING_ABILITY',
        status: 403,
        request_id: reply.headers.get('x-request-id'),
      },
    ]);
    // Requests that are not tool calls are not tool invocations: nothing more is written.
    expect(
      (await mcpPost(runtime, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { token: gateless.token })).status,
    ).toBe(403);
    expect(await activity(gateless.id)).toHaveLength(1);
  });

  it('records a call refused by authentication when the secret matched (revoked), and nothing for a wrong secret or an unknown token id', async () => {
    const revoked = await seedToken(runtime.store, clock, { teamId });
    await revokeToken(runtime.store, clock, teamId, revoked.id);
    const wrongSecret = `${token.slice(0, -4)}ZZZZ`;
    const unknownId = token.replace(/^svc_live_[0-9A-Z]{26}/, 'svc_live_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    const answers = [
      await mcpPost(runtime, toolsCall(1, 'list_projects'), { token: revoked.token, clientIp: '198.51.100.40' }),
      await mcpPost(runtime, toolsCall(2, 'get_team'), { token: wrongSecret, clientIp: '198.51.100.40' }),
      await mcpPost(runtime, toolsCall(3, 'get_team'), { token: unknownId, clientIp: '198.51.100.40' }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401]);
    expect(await activity(revoked.id)).toMatchObject([
      {
        operation: 'list_projects',
        outcome: 'AUTHENTICATION_REQUIRED',
        status: 401,
        request_id: answers[0].headers.get('x-request-id'),
      },
    ]);
    // A wrong secret proves nothing about the caller: like an unknown id, it is attributed to no team.
    expect(await activity(tokenId)).toEqual([]);
    expect(await activity()).toHaveLength(1);

    // Once the IP's anonymous bucket is full no token is verified, so nothing is attributed to a team.
    await mcpPost(runtime, toolsCall(4, 'get_team'), { clientIp: '198.51.100.40' });
    await mcpPost(runtime, toolsCall(5, 'get_team'), { clientIp: '198.51.100.40' });
    expect(
      (await mcpPost(runtime, toolsCall(6, 'list_projects'), { token: revoked.token, clientIp: '198.51.100.40' }))
        .status,
    ).toBe(429);
    expect(await activity()).toHaveLength(1);
  });

  it('records a call sent with a session that is not live (404), with outcome NOT_FOUND', async () => {
    const reply = await mcpPost(runtime, toolsCall(1, 'get_team'), { token, sessionId: randomUUID() });
    expect(reply.status).toBe(404);
    expect(await activity(tokenId)).toMatchObject([{ operation: 'get_team', outcome: 'NOT_FOUND', status: 404 }]);
  });
});
