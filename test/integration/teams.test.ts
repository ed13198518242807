/**
 * Teams (DESIGN D2, D6, D19): `team.created` from `createTeam` through the unit of work,
 * the smoke test reading the team item (so a rename shows at once, through REST and `get_team`), the
 * rename, and the soft delete: `team.deleted` in the outbox (and fanned out to the team's endpoints),
 * every token of the team refused afterwards, no new token or invitation for it. Against DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { createTeam } from '../../shared/domain/teams/repository.js';
import { mintToken } from '../../shared/domain/tokens/repository.js';
import { fanOutEvent } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { createWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import type { StoredEvent } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { mcpPost, mcpSession, rest, tool, toolsCall } from '../support/calls.js';
import { expectPublishedEvent } from '../support/events.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;

beforeAll(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
});

/** Every outbox event of a team as stored, oldest first, each checked against its published schema. */
async function eventsOf(teamId: string): Promise<StoredEvent[]> {
  const result = await runtime.store.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.teamPartition(teamId), ':prefix': keys.event(teamId, '').sk },
    ConsistentRead: true,
  });
  const events = result.items as unknown as StoredEvent[];
  for (const event of events) {
    expectPublishedEvent(event);
    if (event.type.startsWith('team.')) expect(event.project_id).toBeNull();
  }
  return events;
}

/**
 * A client address used by no other request of this file (198.19.0.0/16, sequential), so no two requests share a per-IP
 * bucket.
 */
let addressesUsed = 0;
const freshIp = () => `198.19.${Math.floor(++addressesUsed / 256)}.${addressesUsed % 256}`;

describe('creating a team', () => {
  it('emits team.created in the same transaction', async () => {
    const team = await createTeam(runtime.store, clock, { name: '  Acme  ' });
    expect(team).toEqual({
      id: team.id,
      name: 'Acme',
      created_at: new Date(clock.nowMs()).toISOString(),
      updated_at: new Date(clock.nowMs()).toISOString(),
      deleted_at: null,
    });
    const events = await eventsOf(team.id);
    expect(events.map((event) => event.type)).toEqual(['team.created']);
    expect(events[0].data).toEqual({ team });
    await expect(createTeam(runtime.store, clock, { name: 'Again', id: team.id })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(createTeam(runtime.store, clock, { name: ' ' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await eventsOf(team.id)).toHaveLength(1);
  });
});

describe('the smoke test (DESIGN D2: a valid token and no ability)', () => {
  it('answers the README’s example token (mcp:full, project:view-any) on REST and get_team, and a project-scoped token too', async () => {
    const t = await seedTeam(runtime.store, clock);
    const example = await seedToken(runtime.store, clock, {
      teamId: t.team.id,
      abilities: ['mcp:full', 'project:view-any'],
      name: 'README example',
    });
    const reply = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: example.token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json).toMatchObject({ id: t.team.id, name: t.team.name });
    expect(reply.headers['x-ratelimit-limit']).toBe('600');
    const sessionId = await mcpSession(runtime, example.token);
    const called = await mcpPost(runtime, toolsCall(1, 'get_team'), { token: example.token, sessionId });
    expect(called.status).toBe(200);
    expect(called.json.result.isError, called.text).toBeUndefined();
    expect(called.json.result.structuredContent).toEqual(reply.json);

    const project = (
      await rest(runtime, {
        method: 'POST',
        path: '/v1/projects',
        token: t.token,
        body: { name: 'P', platform_type: 'discord' },
      })
    ).json;
    const scoped = await seedToken(runtime.store, clock, {
      teamId: t.team.id,
      abilities: ['project:view'],
      projectIds: [project.id],
    });
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: scoped.token })).json).toEqual(
      reply.json,
    );
  });

  it('still needs a valid token (401) and, on the tool server, the mcp:full gate (403)', async () => {
    const t = await seedTeam(runtime.store, clock);
    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/teams/current', sourceIp: freshIp() }),
      'AUTHENTICATION_REQUIRED',
    );
    expectRestProblem(
      await rest(runtime, {
        method: 'GET',
        path: '/v1/teams/current',
        token: `${t.token.slice(0, -4)}QQQQ`,
        sourceIp: freshIp(),
      }),
      'AUTHENTICATION_REQUIRED',
    );
    const gateless = await seedToken(runtime.store, clock, { teamId: t.team.id, abilities: ['project:view-any'] });
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: gateless.token })).status).toBe(200);
    const refused = await mcpPost(runtime, toolsCall(1, 'get_team'), { token: gateless.token });
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('TOKEN_MISSING_ABILITY');
  });
});

describe('renaming the team', () => {
  it('shows the new name at once on the smoke test and get_team; emits nothing', async () => {
    const t = await seedTeam(runtime.store, clock);
    clock.advance(1_000);
    const renamed = await rest(runtime, {
      method: 'POST',
      path: '/v1/teams/current',
      token: t.token,
      body: { name: ' Renamed team ' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json).toMatchObject({
      id: t.team.id,
      name: 'Renamed team',
      created_at: t.team.created_at,
      updated_at: new Date(clock.nowMs()).toISOString(),
      deleted_at: null,
    });
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: t.token })).json).toEqual(
      renamed.json,
    );
    expect((await tool(runtime, t.principal, 'get_team', {})).structuredContent).toEqual(renamed.json);
    expect((await eventsOf(t.team.id)).map((event) => event.type)).toEqual(['team.created']);
  });

  it('refuses bad names, unknown fields, weak and project-scoped tokens, writing nothing', async () => {
    const t = await seedTeam(runtime.store, clock);
    const project = (
      await rest(runtime, {
        method: 'POST',
        path: '/v1/projects',
        token: t.token,
        body: { name: 'P', platform_type: 'discord' },
      })
    ).json;
    const scoped = await seedToken(runtime.store, clock, { teamId: t.team.id, projectIds: [project.id] });
    const weak = await seedToken(runtime.store, clock, { teamId: t.team.id, abilities: ['team:view'] });
    const before = await domainSnapshot(runtime.store);
    const rename = (body: unknown, token = t.token) =>
      rest(runtime, { method: 'POST', path: '/v1/teams/current', token, body });
    expectRestProblem(await rename({ name: '' }), 'VALIDATION_FAILED');
    expectRestProblem(await rename({ name: 'x'.repeat(101) }), 'VALIDATION_FAILED');
    expectRestProblem(await rename({ name: 'Ok', id: randomUUID() }), 'VALIDATION_FAILED');
    expectRestProblem(await rename({ name: 'Ok' }, weak.token), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(await rename({ name: 'Ok' }, scoped.token), 'TOKEN_MISSING_ABILITY');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });
});

describe('deleting the team', () => {
  it('needs the team’s own id repeated, and team:delete on a team-wide token', async () => {
    const t = await seedTeam(runtime.store, clock);
    const other = await seedTeam(runtime.store, clock);
    const weak = await seedToken(runtime.store, clock, { teamId: t.team.id, abilities: ['team:view', 'team:update'] });
    const before = await domainSnapshot(runtime.store);
    const remove = (query: Record<string, string> | undefined, token = t.token) =>
      rest(runtime, { method: 'DELETE', path: '/v1/teams/current', token, query });
    expectRestProblem(await remove(undefined), 'VALIDATION_FAILED');
    const wrong = expectRestProblem(await remove({ confirm_team_id: other.team.id }), 'VALIDATION_FAILED');
    expect(wrong.errors?.[0].path).toBe('query.confirm_team_id');
    expectRestProblem(await remove({ confirm_team_id: 'nope' }), 'VALIDATION_FAILED');
    expectRestProblem(await remove({ confirm_team_id: t.team.id }, weak.token), 'TOKEN_MISSING_ABILITY');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('marks it deleted with team.deleted, delivers that event, and refuses the team’s tokens and invitations afterwards', async () => {
    const t = await seedTeam(runtime.store, clock);
    const spare = await seedToken(runtime.store, clock, { teamId: t.team.id, abilities: ['team:view', 'mcp:full'] });
    const endpoint = await createWebhookEndpoint(runtime, t.principal, {
      name: 'Last words',
      url: 'https://receiver.example/hook',
      events: ['team.deleted'],
    });
    const invitation = (
      await rest(runtime, {
        method: 'POST',
        path: '/v1/team-members/invitations',
        token: t.token,
        body: { email: 'late@example.com', name: 'Late', role_ids: [BUILT_IN_ROLE_IDS.viewer] },
      })
    ).json;
    clock.advance(5_000);

    const deleted = await rest(runtime, {
      method: 'DELETE',
      path: '/v1/teams/current',
      token: t.token,
      query: { confirm_team_id: t.team.id },
    });
    expect(deleted.status, deleted.text).toBe(200);
    const at = new Date(clock.nowMs()).toISOString();
    expect(deleted.json).toEqual({ ...t.team, updated_at: at, deleted_at: at });

    const events = await eventsOf(t.team.id);
    const last = events.at(-1)!;
    expect(last.type).toBe('team.deleted');
    expect(last.data).toEqual({ team: deleted.json });
    // The final event still reaches the team's endpoint.
    runtime.drain();
    expect(await fanOutEvent(runtime, last)).toBe(1);
    expect(runtime.drain().queued).toHaveLength(1);
    expect(endpoint.id).toBeDefined();

    for (const token of [t.token, spare.token]) {
      expectRestProblem(
        await rest(runtime, { method: 'GET', path: '/v1/teams/current', token, sourceIp: freshIp() }),
        'AUTHENTICATION_REQUIRED',
      );
    }
    // A principal resolved before the deletion (a request in flight) sees the team as gone.
    expectToolProblem(await tool(runtime, spare.principal, 'get_team', {}), 'AUTHENTICATION_REQUIRED');
    await expect(
      mintToken(runtime.store, clock, { teamId: t.team.id, abilities: ['team:view'] }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expectRestProblem(
      await rest(runtime, {
        method: 'POST',
        path: '/v1/team-invitations/accept',
        body: { token: invitation.invitation_token },
        sourceIp: freshIp(),
      }),
      'NOT_FOUND',
    );
    expect((await eventsOf(t.team.id)).filter((event) => event.type === 'team.deleted')).toHaveLength(1);
  });
});
