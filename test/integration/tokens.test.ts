/**
 * Tokens through the API (interface "Bearer tokens", DESIGN D2): `POST /v1/tokens` mints only within
 * the caller's own abilities and scopes (team fixed from the caller; project scopes only of the caller's
 * team, and only the caller's own projects when it is project-scoped); the bearer secret appears only in
 * the minting response (never in lists, revocations, the activity log or the table, which keeps a
 * SHA-256); `GET /v1/tokens` lists the team's tokens only; `DELETE /v1/tokens/{id}` revokes a token of
 * the team — a foreign or unknown id is NOT_FOUND — and the revoked token fails its very next call,
 * on REST and on the tool server.
 */
import { createHash } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { TOKEN_LAST_USED_PRECISION_MS, TokenList, TokenWithSecret, Token } from '../../shared/domain/tokens/schema.js';
import { createWorld, expectProblem, expectRestProblem, scanTable, type World } from '../support/guarantees.js';
import { mcpPost, mcpSession, rest, toolsCall } from '../support/calls.js';
import type { Store } from '../../shared/store/store.js';
import { createTestRuntime, createTestStore, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
/**
 * One pair of tables for the file: each test makes its own world (teams, tokens), and every check is scoped to it or
 * compares the table before and after.
 */
let store: Store;
let runtime: TestRuntime;
let world: World;

beforeAll(async () => {
  store = await createTestStore();
});

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock, store });
  world = await createWorld(runtime, clock);
});

const mint = (body: unknown, token = world.a.token) =>
  rest(runtime, { method: 'POST', path: '/v1/tokens', token, body });

describe('minting', () => {
  it('mints a working token of the caller’s team and shows its secret once', async () => {
    const reply = await mint({ name: 'ci', abilities: ['team:view', 'project:view-any'] });
    expect(reply.status).toBe(201);
    const minted = TokenWithSecret.parse(reply.json);
    expect(minted.token).toMatch(new RegExp(`^svc_live_${minted.id}_[0-9A-Za-z]{43,}$`));
    expect(minted).toMatchObject({
      name: 'ci',
      abilities: ['team:view', 'project:view-any'],
      scopes: [`scope:team:${world.a.team.id}`],
      revoked_at: null,
    });
    expect(reply.json).not.toHaveProperty('team_id');
    const used = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.token });
    expect(used.json.id).toBe(world.a.team.id);
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/tokens', token: minted.token }),
      'TOKEN_MISSING_ABILITY',
    );

    const secret = minted.token.split('_').at(-1)!;
    const listed = await rest(runtime, {
      method: 'GET',
      path: '/v1/tokens',
      token: world.a.token,
      query: { limit: '100' },
    });
    TokenList.parse(listed.json);
    expect(listed.json.data.map((token: { id: string }) => token.id)).toContain(minted.id);
    for (const token of listed.json.data)
      expect(Object.keys(token).sort()).toEqual([
        'abilities',
        'created_at',
        'expires_at',
        'id',
        'last_used_at',
        'member_id',
        'name',
        'revoked_at',
        'scopes',
      ]);
    // Only tokens issued to OAuth clients expire (DESIGN D30); static tokens never do.
    for (const token of listed.json.data) expect(token.expires_at).toBeNull();
    expect(listed.text).not.toContain(secret);
    const revoked = await rest(runtime, { method: 'DELETE', path: `/v1/tokens/${minted.id}`, token: world.a.token });
    expect(revoked.text).not.toContain(secret);
    const activity = await rest(runtime, { method: 'GET', path: '/v1/activity', token: world.a.token });
    expect(activity.text).not.toContain(secret);
    // The table holds its SHA-256, never the secret.
    const table = JSON.stringify(await scanTable(runtime.store));
    expect(table).not.toContain(secret);
    expect(table).toContain(createHash('sha256').update(secret).digest('hex'));
  });

  it('never grants an ability the caller lacks, and names the missing ones', async () => {
    const narrow = await mint({ abilities: ['token:create', 'team:view'] });
    const reply = await mint(
      { abilities: ['team:view', 'project:view-any', 'webhook-endpoint:manage'] },
      narrow.json.token,
    );
    const problem = expectRestProblem(reply, 'TOKEN_MISSING_ABILITY');
    expect(problem.detail).toContain('project:view-any');
    expect(problem.detail).toContain('webhook-endpoint:manage');
    // Within its abilities it may mint, even a token that can mint again.
    expect((await mint({ abilities: ['team:view', 'token:create'] }, narrow.json.token)).status).toBe(201);
    // Minting needs token:create itself.
    expectRestProblem(await mint({ abilities: ['team:view'] }, world.a.weak.token), 'TOKEN_MISSING_ABILITY');
  });

  it('refuses unknown abilities, duplicates aside, and malformed requests', async () => {
    expectProblem((await mint({ abilities: ['superuser'] })).json, 'VALIDATION_FAILED');
    expectProblem((await mint({ abilities: [] })).json, 'VALIDATION_FAILED');
    expectProblem(
      (await mint({ abilities: ['team:view'], scopes: [`scope:team:${world.b.team.id}`] })).json,
      'VALIDATION_FAILED',
    );
    expectProblem((await mint({ abilities: ['team:view'], team_id: world.b.team.id })).json, 'VALIDATION_FAILED');
    expectProblem((await mint({ abilities: ['team:view'], project_ids: ['not-a-uuid'] })).json, 'VALIDATION_FAILED');
    const deduplicated = await mint({ abilities: ['team:view', 'team:view'] });
    expect(deduplicated.json.abilities).toEqual(['team:view']);
  });

  it('narrows to projects of the caller’s team only: another team’s or an unknown project is NOT_FOUND', async () => {
    const scoped = await mint({ abilities: ['project:view', 'project:view-any'], project_ids: [world.a.project.id] });
    expect(scoped.status).toBe(201);
    expect(scoped.json.scopes).toEqual([`scope:team:${world.a.team.id}`, `scope:project:${world.a.project.id}`]);
    expect(
      (await rest(runtime, { method: 'GET', path: `/v1/projects/${world.a.project.id}`, token: scoped.json.token }))
        .status,
    ).toBe(200);
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: `/v1/projects/${world.a.otherProject.id}`, token: scoped.json.token }),
      'NOT_FOUND',
    );
    expectRestProblem(await mint({ abilities: ['project:view'], project_ids: [world.b.project.id] }), 'NOT_FOUND');
    expectRestProblem(await mint({ abilities: ['project:view'], project_ids: [crypto.randomUUID()] }), 'NOT_FOUND');
  });

  it('lets a project-scoped token mint only within its own projects and abilities', async () => {
    const scopedToken = world.a.scoped.token;
    const inside = await mint({ abilities: ['project:view'], project_ids: [world.a.project.id] }, scopedToken);
    expect(inside.status).toBe(201);
    expect(inside.json.scopes).toEqual([`scope:team:${world.a.team.id}`, `scope:project:${world.a.project.id}`]);
    // Dropping the project scope would widen it to the whole team.
    expectRestProblem(await mint({ abilities: ['project:view'] }, scopedToken), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(
      await mint({ abilities: ['project:view'], project_ids: [world.a.otherProject.id] }, scopedToken),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await mint(
        { abilities: ['project:view'], project_ids: [world.a.project.id, world.a.otherProject.id] },
        scopedToken,
      ),
      'TOKEN_MISSING_ABILITY',
    );
    // A token minted by a scoped token is itself scoped: it cannot reach team-wide data.
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/tokens', token: inside.json.token }),
      'TOKEN_MISSING_ABILITY',
    );
  });
});

describe('listing', () => {
  it('lists only the caller’s team, oldest first, in pages', async () => {
    for (let index = 0; index < 4; index++) await mint({ abilities: ['team:view'], name: `t${index}` });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const reply = await rest(runtime, {
        method: 'GET',
        path: '/v1/tokens',
        token: world.a.token,
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
      });
      expect(reply.status).toBe(200);
      expect(reply.json.data.length).toBeLessThanOrEqual(2);
      for (const token of reply.json.data) Token.parse(token);
      seen.push(...reply.json.data.map((token: { id: string }) => token.id));
      cursor = reply.json.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...seen].sort());
    expect(seen).toHaveLength(new Set(seen).size);
    expect(seen).toContain(world.a.scoped.id);
    expect(seen).not.toContain(world.b.principal.tokenId);
    expect(seen).not.toContain(world.b.spare.id);
    expect(seen.length).toBe(4 + 4); // the team's own, the spare, the scoped and the weak token + 4 minted
  });
});

describe('last used', () => {
  it('stamps last_used_at when a token authenticates a call, at most once an hour (null until first used)', async () => {
    const minted = TokenWithSecret.parse((await mint({ name: 'usage', abilities: ['team:view'] })).json);
    const listedUse = async () => {
      const listed = await rest(runtime, {
        method: 'GET',
        path: '/v1/tokens',
        token: world.a.token,
        query: { limit: '100' },
      });
      return (listed.json.data as Array<{ id: string; last_used_at: string | null }>).find(
        (token) => token.id === minted.id,
      )!.last_used_at;
    };
    expect(minted.last_used_at).toBeNull();
    expect(await listedUse()).toBeNull();

    const firstUse = clock.nowMs();
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.token })).status).toBe(200);
    expect(await listedUse()).toBe(new Date(firstUse).toISOString());

    // Within the hour the stamp is not rewritten.
    clock.advance(TOKEN_LAST_USED_PRECISION_MS - 1000);
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.token })).status).toBe(200);
    expect(await listedUse()).toBe(new Date(firstUse).toISOString());

    // After it, the next call moves it.
    clock.advance(2000);
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.token })).status).toBe(200);
    expect(await listedUse()).toBe(new Date(clock.nowMs()).toISOString());
  });
});

describe('revoking', () => {
  it('revokes a token of the team; the next REST call and the next tool-server call fail with AUTHENTICATION_REQUIRED', async () => {
    const minted = await mint({ abilities: ['team:view', 'mcp:full'] });
    const sessionId = await mcpSession(runtime, minted.json.token);
    expect((await mcpPost(runtime, toolsCall(1, 'get_team'), { token: minted.json.token, sessionId })).status).toBe(
      200,
    );
    const revoked = await rest(runtime, {
      method: 'DELETE',
      path: `/v1/tokens/${minted.json.id}`,
      token: world.a.token,
    });
    expect(revoked.status).toBe(200);
    Token.parse(revoked.json);
    expect(revoked.json.revoked_at).toBe(new Date(clock.nowMs()).toISOString());
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.json.token }),
      'AUTHENTICATION_REQUIRED',
    );
    const tool = await mcpPost(runtime, toolsCall(2, 'get_team'), { token: minted.json.token, sessionId });
    expect(tool.status).toBe(401);
    expectProblem(tool.json, 'AUTHENTICATION_REQUIRED');
    // Revoking again keeps the first time.
    clock.advance(60_000);
    const again = await rest(runtime, { method: 'DELETE', path: `/v1/tokens/${minted.json.id}`, token: world.a.token });
    expect(again.json.revoked_at).toBe(revoked.json.revoked_at);
  });

  it('answers NOT_FOUND for another team’s token and for an unknown one, and leaves the foreign token working', async () => {
    expectRestProblem(
      await rest(runtime, { method: 'DELETE', path: `/v1/tokens/${world.b.spare.id}`, token: world.a.token }),
      'NOT_FOUND',
    );
    expectRestProblem(
      await rest(runtime, { method: 'DELETE', path: '/v1/tokens/01ARZ3NDEKTSV4RRFFQ69G5FAV', token: world.a.token }),
      'NOT_FOUND',
    );
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: world.b.spare.token })).status).toBe(
      200,
    );
  });

  it('lets a token revoke itself only when asked explicitly (?self=true); later calls fail', async () => {
    const minted = await mint({ abilities: ['token:revoke', 'team:view'] });
    const refused = await rest(runtime, {
      method: 'DELETE',
      path: `/v1/tokens/${minted.json.id}`,
      token: minted.json.token,
    });
    expectRestProblem(refused, 'CONFLICT');
    expect(refused.json.detail).toContain('self=true');
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.json.token })).status).toBe(
      200,
    );
    expect(
      (
        await rest(runtime, {
          method: 'DELETE',
          path: `/v1/tokens/${minted.json.id}`,
          token: minted.json.token,
          query: { self: 'true' },
        })
      ).status,
    ).toBe(200);
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.json.token }),
      'AUTHENTICATION_REQUIRED',
    );
  });
});
