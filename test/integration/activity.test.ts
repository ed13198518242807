/**
 * The activity log (interface "Tool-server authorization" 3, DESIGN D5): every tool call and every REST
 * write is recorded — whatever its outcome — with the invoking token id, the surface, the operation
 * (REST operation id or tool name), the outcome (`ok` or the error code), the HTTP status, the duration
 * and the request id the caller saw. REST reads are not recorded. The log reads newest first with
 * cursor pagination (REST `GET /v1/activity` and the `get_activity_log` tool alike), filtered by token, operation
 * and/or surface with full pages, and it never holds a token secret or a webhook secret.
 */
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { callTool } from '../../shared/mcp/tools.js';
import { ActivityList } from '../../shared/domain/activity/schema.js';
import { createWorld, expectRestProblem, expectToolProblem, type World } from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { createTestRuntime, testClock, type TestRuntime } from '../support/store.js';
import type { ActivityEntry } from '../../shared/domain/activity/schema.js';

let clock: ManualClock;
let runtime: TestRuntime;
let world: World;

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  world = await createWorld(runtime, clock); // seeds through the domain: no activity yet
});

type Entry = ActivityEntry;

/** Reads the whole log of team A through REST, page by page (`limit` per page). */
async function readAll(
  query: Record<string, string> = {},
  limit = 100,
): Promise<{ entries: Entry[]; pages: number[] }> {
  const entries: Entry[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  do {
    const reply = await rest(runtime, {
      method: 'GET',
      path: '/v1/activity',
      token: world.a.token,
      query: { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) },
    });
    expect(reply.status, reply.text).toBe(200);
    ActivityList.parse(reply.json);
    entries.push(...reply.json.data);
    pages.push(reply.json.data.length);
    cursor = reply.json.next_cursor ?? undefined;
  } while (cursor && pages.length < 100);
  return { entries, pages };
}

describe('what is recorded', () => {
  it('records every REST write, successful or not, with token, surface, operation, outcome, status, duration and request id', async () => {
    const created = await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: 'Logged', platform_type: 'discord' },
    });
    clock.advance(5);
    const invalid = await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: '' },
    });
    clock.advance(5);
    const forbidden = await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: world.a.weak.token,
      body: { name: 'x', platform_type: 'discord' },
    });
    clock.advance(5);
    const missing = await rest(runtime, {
      method: 'DELETE',
      path: `/v1/webhook-endpoints/${randomUUID()}`,
      token: world.a.token,
    });
    clock.advance(5);
    const read = await rest(runtime, { method: 'GET', path: '/v1/projects', token: world.a.token });
    expect(read.status).toBe(200);
    const { entries } = await readAll();
    expect(
      entries.map((entry) => [entry.operation, entry.outcome, entry.status, entry.token_id, entry.surface]),
    ).toEqual([
      ['deleteWebhookEndpoint', 'NOT_FOUND', 404, world.a.principal.tokenId, 'rest'],
      ['createProject', 'TOKEN_MISSING_ABILITY', 403, world.a.weak.id, 'rest'],
      ['createProject', 'VALIDATION_FAILED', 422, world.a.principal.tokenId, 'rest'],
      ['createProject', 'ok', 201, world.a.principal.tokenId, 'rest'],
    ]);
    expect(entries.map((entry) => entry.request_id)).toEqual(
      [missing, forbidden, invalid, created].map((reply) => reply.headers['x-request-id']),
    );
    for (const entry of entries) {
      expect(entry.id).toMatch(/^act_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(entry.duration_ms).toBeGreaterThanOrEqual(0);
      expect(Number.isInteger(entry.duration_ms)).toBe(true);
    }
    // Timestamps follow the clock, newest first.
    expect(entries.map((entry) => entry.occurred_at)).toEqual(
      [...entries.map((entry) => entry.occurred_at)].sort().reverse(),
    );
  });

  it('records every tool call — ok, refused, invalid, failed and unknown — with the request id of the call', async () => {
    const calls: [string, unknown, string][] = [
      ['list_projects', {}, 'ok'],
      ['get_project', { project_id: randomUUID() }, 'NOT_FOUND'],
      ['create_project', { name: 42 }, 'VALIDATION_FAILED'],
      ['retry_webhook_delivery', { id: world.a.deliveryId }, 'CONFLICT'],
      ['no_such_tool', {}, 'NOT_FOUND'],
    ];
    const requestIds: string[] = [];
    for (const [name, args] of calls) {
      const requestId = randomUUID();
      requestIds.push(requestId);
      await callTool(runtime, world.a.principal, name, args, requestId);
    }
    await tool(runtime, world.a.weak.principal, 'list_projects');
    const { entries } = await readAll();
    const mine = entries.filter((entry) => entry.token_id === world.a.principal.tokenId).reverse();
    expect(mine.map((entry) => [entry.surface, entry.operation, entry.outcome, entry.request_id])).toEqual(
      calls.map(([name, , outcome], index) => ['mcp', name, outcome, requestIds[index]]),
    );
    expect(mine.map((entry) => entry.status)).toEqual([200, 404, 422, 409, 404]);
    expect(entries.find((entry) => entry.token_id === world.a.weak.id)).toMatchObject({
      operation: 'list_projects',
      outcome: 'TOKEN_MISSING_ABILITY',
      status: 403,
    });
  });

  it('does not record REST reads or unauthenticated requests, and never records another team’s calls in this team', async () => {
    await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: world.a.token });
    await rest(runtime, { method: 'POST', path: '/v1/projects', body: { name: 'x', platform_type: 'discord' } });
    await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: world.b.token,
      body: { name: 'B', platform_type: 'discord' },
    });
    await tool(runtime, world.b.principal, 'list_projects');
    expect((await readAll()).entries).toEqual([]);
    const bLog = await rest(runtime, { method: 'GET', path: '/v1/activity', token: world.b.token });
    expect(bLog.json.data.map((entry: Entry) => entry.operation)).toEqual(['list_projects', 'createProject']);
  });
});

describe('reading the log', () => {
  beforeEach(async () => {
    // 30 entries: 3 operations × 2 tokens, interleaved; the clock stands still, so order rests on the ids.
    for (let index = 0; index < 5; index++) {
      await tool(runtime, world.a.principal, 'list_projects');
      await tool(runtime, world.a.weak.principal, 'get_team');
      await rest(runtime, {
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: { name: `P${index}`, platform_type: 'discord' },
      });
      await tool(runtime, world.a.principal, 'get_team');
      await tool(runtime, world.a.weak.principal, 'list_projects');
      await rest(runtime, {
        method: 'POST',
        path: '/v1/projects',
        token: world.a.weak.token,
        body: { name: `W${index}`, platform_type: 'discord' },
      });
    }
  });

  it('pages newest first with cursors: every entry exactly once, in write order reversed', async () => {
    const whole = await readAll({}, 100);
    expect(whole.entries).toHaveLength(30);
    const expectedOrder = Array.from({ length: 5 }, () => [
      'list_projects',
      'get_team',
      'createProject',
      'get_team',
      'list_projects',
      'createProject',
    ])
      .flat()
      .reverse();
    expect(whole.entries.map((entry) => entry.operation)).toEqual(expectedOrder);
    const paged = await readAll({}, 7);
    expect(paged.entries.map((entry) => entry.id)).toEqual(whole.entries.map((entry) => entry.id));
    expect(paged.pages.slice(0, 4)).toEqual([7, 7, 7, 7]);
    expect(new Set(paged.entries.map((entry) => entry.id)).size).toBe(30);
  });

  it('filters by token, by operation and by both, with full pages and working cursors', async () => {
    const whole = (await readAll()).entries;
    const byToken = await readAll({ token_id: world.a.weak.id }, 4);
    expect(byToken.entries.map((entry) => entry.id)).toEqual(
      whole.filter((entry) => entry.token_id === world.a.weak.id).map((entry) => entry.id),
    );
    expect(byToken.entries).toHaveLength(15);
    expect(byToken.pages.slice(0, 3)).toEqual([4, 4, 4]);
    const byOperation = await readAll({ operation: 'get_team' }, 3);
    expect(byOperation.entries.map((entry) => entry.id)).toEqual(
      whole.filter((entry) => entry.operation === 'get_team').map((entry) => entry.id),
    );
    expect(byOperation.pages.slice(0, 3)).toEqual([3, 3, 3]);
    const both = await readAll({ token_id: world.a.principal.tokenId, operation: 'createProject' }, 2);
    expect(both.entries).toHaveLength(5);
    expect(
      both.entries.every(
        (entry) =>
          entry.operation === 'createProject' && entry.token_id === world.a.principal.tokenId && entry.outcome === 'ok',
      ),
    ).toBe(true);
    const none = await readAll({ operation: 'dropEverything' });
    expect(none.entries).toEqual([]);
  });

  it('filters by surface, alone and with an operation, with full pages', async () => {
    const whole = (await readAll()).entries;
    const bySurface = await readAll({ surface: 'mcp' }, 6);
    expect(bySurface.entries.map((entry) => entry.id)).toEqual(
      whole.filter((entry) => entry.surface === 'mcp').map((entry) => entry.id),
    );
    expect(bySurface.entries).toHaveLength(20);
    expect(bySurface.pages.slice(0, 3)).toEqual([6, 6, 6]);
    const restWrites = await readAll({ surface: 'rest', operation: 'createProject' });
    expect(restWrites.entries).toHaveLength(10);
    expect(await readAll({ surface: 'rest', operation: 'get_team' })).toMatchObject({ entries: [] });
    expect(await readAll({ surface: 'hook' })).toMatchObject({ entries: [] });
  });

  it('reads the same through the get_activity_log tool', async () => {
    const whole = (await readAll()).entries;
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const result = await tool(runtime, world.a.principal, 'get_activity_log', {
        limit: 9,
        token_id: world.a.principal.tokenId,
        ...(cursor ? { cursor } : {}),
      });
      expect(result.isError).toBeUndefined();
      ids.push(...(result.structuredContent.data as Entry[]).map((entry) => entry.id));
      cursor = (result.structuredContent.next_cursor as string | null) ?? undefined;
    } while (cursor);
    // Each call is logged after it read its page, and later pages lie below the cursor: the reads do not show up.
    expect(ids).toEqual(whole.filter((entry) => entry.token_id === world.a.principal.tokenId).map((entry) => entry.id));
  });

  it('refuses bad filters and cursors as VALIDATION_FAILED', async () => {
    expectRestProblem(
      await rest(runtime, {
        method: 'GET',
        path: '/v1/activity',
        token: world.a.token,
        query: { token_id: 'svc_live_x' },
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/activity', token: world.a.token, query: { operation: '' } }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/activity', token: world.a.token, query: { cursor: 'abc' } }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/activity', token: world.a.token, query: { surface: 'fax' } }),
      'VALIDATION_FAILED',
    );
    expectToolProblem(
      await tool(runtime, world.a.principal, 'get_activity_log', { token_id: 'nope' }),
      'VALIDATION_FAILED',
    );
    expectToolProblem(
      await tool(runtime, world.a.principal, 'get_activity_log', { surface: 'fax' }),
      'VALIDATION_FAILED',
    );
  });
});

describe('secrets never reach the log', () => {
  it('holds no token secret and no webhook secret, whatever was minted, created, rotated or replayed', async () => {
    const key = randomUUID();
    const minted = await rest(runtime, {
      method: 'POST',
      path: '/v1/tokens',
      token: world.a.token,
      headers: { 'Idempotency-Key': key },
      body: { abilities: ['team:view'], name: 'logged' },
    });
    await rest(runtime, {
      method: 'POST',
      path: '/v1/tokens',
      token: world.a.token,
      headers: { 'Idempotency-Key': key },
      body: { abilities: ['team:view'], name: 'logged' },
    });
    const endpoint = await rest(runtime, {
      method: 'POST',
      path: '/v1/webhook-endpoints',
      token: world.a.token,
      body: { name: 'x', url: 'https://a.example/h', events: ['project.created'] },
    });
    const rotated = await rest(runtime, {
      method: 'POST',
      path: `/v1/webhook-endpoints/${endpoint.json.id}/rotate-secret`,
      token: world.a.token,
    });
    const toolEndpoint = await tool(runtime, world.a.principal, 'create_webhook_endpoint', {
      name: 'y',
      url: 'https://a.example/y',
      events: ['project.created'],
    });
    const toolRotated = await tool(runtime, world.a.principal, 'rotate_webhook_endpoint_secret', {
      id: world.a.endpoint.id,
    });
    // A caller pasting a secret where it does not belong still does not get it logged.
    await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: world.a.token, platform_type: 'nope' },
    });
    await callTool(runtime, world.a.principal, world.a.token, {}, randomUUID());
    const secrets = [
      minted.json.token,
      (minted.json.token as string).split('_').at(-1)!,
      world.a.token.split('_').at(-1)!,
      endpoint.json.secret,
      rotated.json.secret,
      toolEndpoint.structuredContent.secret as string,
      toolRotated.structuredContent.secret as string,
      world.a.endpoint.secret,
    ];
    for (const secret of secrets) expect(secret).toEqual(expect.any(String));
    const raw = await runtime.store.document.send(
      new QueryCommand({
        TableName: runtime.store.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `TEAM#${world.a.team.id}#ACTIVITY` },
      }),
    );
    expect(raw.Items!.length).toBeGreaterThanOrEqual(8);
    const stored = JSON.stringify(raw.Items);
    for (const secret of secrets) expect(stored).not.toContain(secret.slice(-32));
    const served = JSON.stringify((await readAll()).entries);
    for (const secret of secrets) expect(served).not.toContain(secret.slice(-32));
  });
});
