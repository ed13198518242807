/**
 * Team members (DESIGN D2, D6, D19): invitations (token returned once, stored only as a
 * SHA-256, 7-day expiry, the public accept route with one problem for every bad token and the per-IP
 * anonymous bucket), reads over REST and `list_team_members`, role and group changes, removal (tokens
 * minted on the member's behalf revoked), and tokens minted on behalf of a member (never above the
 * member's abilities). Every event is read from the outbox and checked against its published JSON Schema.
 * Against DynamoDB Local, with an injected clock.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { seedToken } from '../support/store.js';
import {
  clock,
  eventsOf,
  freshIp,
  runtime,
  setup,
  typesOf,
  useTeamMembersFixture,
} from '../support/fixtures/team-members.js';

useTeamMembersFixture();

describe('reading members', () => {
  it('lists members over REST and list_team_members, with role, group and status filters and cursors', async () => {
    const t = await setup();
    const viewer = await t.invite({ email: 'v@example.com' });
    const developer = await t.invite({ email: 'd@example.com', role_ids: [BUILT_IN_ROLE_IDS.developer] });
    await t.accept(developer.invitation_token);
    const group = await t.call('POST', '/v1/groups', { name: 'Ops', member_ids: [viewer.id] });
    expect(group.status).toBe(201);

    const all = await t.call('GET', '/v1/team-members');
    expect(all.json.data.map((member: { id: string }) => member.id).sort()).toEqual([viewer.id, developer.id].sort());
    const byRole = await t.call('GET', '/v1/team-members', undefined, {
      query: { role_id: BUILT_IN_ROLE_IDS.developer },
    });
    expect(byRole.json.data.map((member: { id: string }) => member.id)).toEqual([developer.id]);
    const byGroup = await t.call('GET', '/v1/team-members', undefined, { query: { group_id: group.json.id } });
    expect(byGroup.json.data.map((member: { id: string }) => member.id)).toEqual([viewer.id]);
    const active = await t.call('GET', '/v1/team-members', undefined, { query: { status: 'active' } });
    expect(active.json.data.map((member: { id: string }) => member.id)).toEqual([developer.id]);

    const viaTool = await tool(runtime, t.principal, 'list_team_members', { role_id: BUILT_IN_ROLE_IDS.viewer });
    expect(viaTool.isError).toBeFalsy();
    expect((viaTool.structuredContent.data as { id: string }[]).map((member) => member.id)).toEqual([viewer.id]);
    expectToolProblem(
      await tool(runtime, t.principal, 'list_team_members', { team_id: t.team.id }),
      'VALIDATION_FAILED',
    );

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await t.call('GET', '/v1/team-members', undefined, {
        query: cursor ? { limit: '1', cursor } : { limit: '1' },
      });
      expect(page.status).toBe(200);
      seen.push(...page.json.data.map((member: { id: string }) => member.id));
      cursor = page.json.next_cursor ?? undefined;
    } while (cursor);
    expect(seen.sort()).toEqual([viewer.id, developer.id].sort());
  });

  it('is team-wide data: a project-scoped token is refused, an unknown id is NOT_FOUND', async () => {
    const t = await setup();
    const project = await t.call('POST', '/v1/projects', { name: 'P', platform_type: 'discord' });
    const scoped = await seedToken(runtime.store, clock, { teamId: t.team.id, projectIds: [project.json.id] });
    expectRestProblem(
      await t.call('GET', '/v1/team-members', undefined, { token: scoped.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectToolProblem(await tool(runtime, scoped.principal, 'list_team_members', {}), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(await t.call('GET', `/v1/team-members/${randomUUID()}`), 'NOT_FOUND');
    expectRestProblem(await t.call('GET', '/v1/team-members/not-a-uuid'), 'VALIDATION_FAILED');
  });
});

describe('changing roles and groups', () => {
  it('replaces roles and groups in one transaction with team.member_role_changed and group.updated', async () => {
    const t = await setup();
    const member = await t.invite({ email: 'r@example.com' });
    const group = (await t.call('POST', '/v1/groups', { name: 'Support crew', role_ids: [BUILT_IN_ROLE_IDS.support] }))
      .json;
    const changed = await t.call('POST', `/v1/team-members/${member.id}`, {
      role_ids: [BUILT_IN_ROLE_IDS.analyst],
      group_ids: [group.id],
      name: 'Ada L.',
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      name: 'Ada L.',
      role_ids: [BUILT_IN_ROLE_IDS.analyst],
      group_ids: [group.id],
      status: 'invited',
    });
    const events = await eventsOf(t.team.id);
    expect(typesOf(events).slice(-2)).toEqual(['team.member_role_changed', 'group.updated']);
    expect(events.at(-2)!.data).toMatchObject({
      previous_role_ids: [BUILT_IN_ROLE_IDS.viewer],
      previous_group_ids: [],
      team_member: { id: member.id },
    });
    expect(events.at(-1)!.data).toMatchObject({ group: { id: group.id, member_ids: [member.id], member_count: 1 } });
    expect((await t.call('GET', `/v1/groups/${group.id}`)).json.member_ids).toEqual([member.id]);

    // The same request again changes nothing and emits nothing.
    const count = (await eventsOf(t.team.id)).length;
    const same = await t.call('POST', `/v1/team-members/${member.id}`, {
      role_ids: [BUILT_IN_ROLE_IDS.analyst],
      group_ids: [group.id],
    });
    expect(same.status).toBe(200);
    expect((await eventsOf(t.team.id)).length).toBe(count);

    // Leaving the group takes the member out of it.
    await t.call('POST', `/v1/team-members/${member.id}`, { group_ids: [] });
    expect((await t.call('GET', `/v1/groups/${group.id}`)).json).toMatchObject({ member_ids: [], member_count: 0 });
  });

  it('needs role:assign for roles and group:manage-members for groups, and never grants beyond the caller', async () => {
    const t = await setup();
    const member = await t.invite({ email: 'perm@example.com' });
    const updater = await seedToken(runtime.store, clock, { teamId: t.team.id, abilities: ['team-member:update'] });
    const assigner = await seedToken(runtime.store, clock, {
      teamId: t.team.id,
      abilities: ['team-member:update', 'role:assign', 'team:view'],
    });
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(
      await t.call('POST', `/v1/team-members/${member.id}`, { role_ids: [] }, { token: updater.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await t.call('POST', `/v1/team-members/${member.id}`, { group_ids: [] }, { token: updater.token }),
      'TOKEN_MISSING_ABILITY',
    );
    const beyond = expectRestProblem(
      await t.call(
        'POST',
        `/v1/team-members/${member.id}`,
        { role_ids: [BUILT_IN_ROLE_IDS.owner] },
        { token: assigner.token },
      ),
      'TOKEN_MISSING_ABILITY',
    );
    expect(beyond.detail).toContain('team:delete');
    expectRestProblem(await t.call('POST', `/v1/team-members/${member.id}`, { role_ids: [randomUUID()] }), 'NOT_FOUND');
    expectRestProblem(await t.call('POST', `/v1/team-members/${member.id}`, { status: 'active' }), 'VALIDATION_FAILED');
    expectRestProblem(await t.call('POST', `/v1/team-members/${randomUUID()}`, { name: 'Nobody' }), 'NOT_FOUND');
    // The name alone needs no more than team-member:update.
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(
      (await t.call('POST', `/v1/team-members/${member.id}`, { name: 'Renamed' }, { token: updater.token })).json.name,
    ).toBe('Renamed');
  });
});

describe('removing a member', () => {
  it('removes them with team.member_removed, frees their e-mail and roles, and revokes their tokens', async () => {
    const t = await setup();
    const role = (await t.call('POST', '/v1/roles', { name: 'Readers', abilities: ['team:view', 'project:view-any'] }))
      .json;
    const group = (await t.call('POST', '/v1/groups', { name: 'Readers group' })).json;
    const member = await t.invite({ email: 'leaver@example.com', role_ids: [role.id], group_ids: [group.id] });
    await t.accept(member.invitation_token);
    const minted = await t.call('POST', '/v1/tokens', { abilities: ['team:view'], member_id: member.id });
    expect(minted.status, minted.text).toBe(201);
    expect((await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.json.token })).status).toBe(
      200,
    );
    expectRestProblem(await t.call('DELETE', `/v1/roles/${role.id}`), 'CONFLICT');

    const removed = await t.call('DELETE', `/v1/team-members/${member.id}`);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json).toMatchObject({
      status: 'removed',
      role_ids: [],
      group_ids: [],
      removed_at: new Date(clock.nowMs()).toISOString(),
    });
    const events = await eventsOf(t.team.id);
    expect(typesOf(events).slice(-2)).toEqual(['team.member_removed', 'group.updated']);
    expect(events.at(-1)!.data).toMatchObject({ group: { id: group.id, member_ids: [] } });

    expectRestProblem(
      await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: minted.json.token, sourceIp: freshIp() }),
      'AUTHENTICATION_REQUIRED',
    );
    expect((await t.call('DELETE', `/v1/roles/${role.id}`)).status).toBe(200);
    expectRestProblem(await t.call('DELETE', `/v1/team-members/${member.id}`), 'CONFLICT');
    expectRestProblem(await t.call('POST', `/v1/team-members/${member.id}`, { name: 'Back' }), 'CONFLICT');
    // The address can be invited again, as a new member.
    const again = await t.invite({ email: 'leaver@example.com' });
    expect(again.id).not.toBe(member.id);
  });
});

describe('tokens minted on behalf of a member', () => {
  async function activeMember(t: Awaited<ReturnType<typeof setup>>, body: Record<string, unknown>) {
    const member = await t.invite({ email: `${randomUUID()}@example.com`, ...body });
    expect((await t.accept(member.invitation_token)).status).toBe(200);
    return member;
  }

  it('hold at most the intersection of the caller’s and the member’s abilities', async () => {
    const t = await setup();
    const member = await activeMember(t, { role_ids: [BUILT_IN_ROLE_IDS.analyst] });
    const ok = await t.call('POST', '/v1/tokens', {
      abilities: ['project:view-any', 'activity:export'],
      member_id: member.id,
      name: 'analyst bot',
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json).toMatchObject({ member_id: member.id, abilities: ['project:view-any', 'activity:export'] });
    const listed = await t.call('GET', '/v1/tokens');
    expect(listed.json.data.find((token: { id: string }) => token.id === ok.json.id).member_id).toBe(member.id);

    const invited = await t.invite({ email: 'not-yet@example.com' });
    const weak = await seedToken(runtime.store, clock, { teamId: t.team.id, abilities: ['token:create', 'team:view'] });
    const before = await domainSnapshot(runtime.store);
    const beyondMember = expectRestProblem(
      await t.call('POST', '/v1/tokens', { abilities: ['project:view-any', 'project:create'], member_id: member.id }),
      'TOKEN_MISSING_ABILITY',
    );
    expect(beyondMember.detail).toContain('project:create');
    expect(beyondMember.detail).not.toContain('project:view-any');
    // The caller's own limit is checked too (a weak caller, a strong member).
    expectRestProblem(
      await t.call(
        'POST',
        '/v1/tokens',
        { abilities: ['project:view-any'], member_id: member.id },
        { token: weak.token },
      ),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await t.call('POST', '/v1/tokens', { abilities: ['team:view'], member_id: randomUUID() }),
      'NOT_FOUND',
    );
    expectRestProblem(
      await t.call('POST', '/v1/tokens', { abilities: ['team:view'], member_id: invited.id }),
      'CONFLICT',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('never hold more than the member does now: a demotion, a role edit and a deleted group narrow them at once', async () => {
    const t = await setup();
    const member = await activeMember(t, { role_ids: [BUILT_IN_ROLE_IDS.admin] });
    const minted = await t.call('POST', '/v1/tokens', {
      abilities: ['project:view-any', 'project-payment:view-any', 'activity:read', 'webhook-endpoint:manage'],
      member_id: member.id,
      name: 'admin bot',
    });
    expect(minted.status, minted.text).toBe(201);
    const abilitiesOf = async () =>
      (await t.call('GET', '/v1/tokens')).json.data.find((token: { id: string }) => token.id === minted.json.id)
        .abilities as string[];
    const asBot = (path: string) =>
      rest(runtime, { method: 'GET', path, token: minted.json.token, sourceIp: freshIp() });
    expect((await asBot('/v1/activity')).status).toBe(200);

    // Demoted to a custom role that reads projects only: the token keeps only what the member still holds.
    const reader = (
      await t.call('POST', '/v1/roles', { name: 'Reader', abilities: ['project:view-any', 'activity:read'] })
    ).json;
    expect((await t.call('POST', `/v1/team-members/${member.id}`, { role_ids: [reader.id] })).status).toBe(200);
    expect((await abilitiesOf()).sort()).toEqual(['activity:read', 'project:view-any']);
    expectRestProblem(await asBot(`/v1/projects/${randomUUID()}/payments`), 'TOKEN_MISSING_ABILITY');
    expect((await asBot('/v1/activity')).status).toBe(200);

    // The role loses an ability: so does the token.
    expect((await t.call('POST', `/v1/roles/${reader.id}`, { abilities: ['project:view-any'] })).status).toBe(200);
    expect(await abilitiesOf()).toEqual(['project:view-any']);
    expectRestProblem(await asBot('/v1/activity'), 'TOKEN_MISSING_ABILITY');

    // Held through a group instead, then the group goes: nothing is left.
    const group = (
      await t.call('POST', '/v1/groups', { name: 'Readers', role_ids: [reader.id], member_ids: [member.id] })
    ).json;
    expect((await t.call('POST', `/v1/team-members/${member.id}`, { role_ids: [] })).status).toBe(200);
    expect(await abilitiesOf()).toEqual(['project:view-any']);
    expect((await t.call('DELETE', `/v1/groups/${group.id}`)).status).toBe(200);
    expect(await abilitiesOf()).toEqual([]);
    expectRestProblem(await asBot('/v1/projects'), 'TOKEN_MISSING_ABILITY');
  });

  it('count the roles of the member’s groups, and project-scoped roles only inside their projects', async () => {
    const t = await setup();
    const project = (await t.call('POST', '/v1/projects', { name: 'Scoped', platform_type: 'discord' })).json;
    const scopedRole = (
      await t.call('POST', '/v1/roles', {
        name: 'Project editor',
        abilities: ['project:archive', 'project:view'],
        project_ids: [project.id],
      })
    ).json;
    const group = (await t.call('POST', '/v1/groups', { name: 'Devs', role_ids: [BUILT_IN_ROLE_IDS.developer] })).json;
    const member = await activeMember(t, { role_ids: [scopedRole.id], group_ids: [group.id] });

    // From the group's developer role: team-wide.
    expect(
      (await t.call('POST', '/v1/tokens', { abilities: ['webhook-endpoint:manage'], member_id: member.id })).status,
    ).toBe(201);
    // From the project-scoped role: only in a token narrowed to that project.
    expectRestProblem(
      await t.call('POST', '/v1/tokens', { abilities: ['project:archive'], member_id: member.id }),
      'TOKEN_MISSING_ABILITY',
    );
    const narrowed = await t.call('POST', '/v1/tokens', {
      abilities: ['project:archive'],
      member_id: member.id,
      project_ids: [project.id],
    });
    expect(narrowed.status, narrowed.text).toBe(201);
    expect(narrowed.json.scopes).toContain(`scope:project:${project.id}`);

    // Leaving the group takes the group's abilities away from new tokens.
    await t.call('POST', `/v1/team-members/${member.id}`, { group_ids: [] });
    expectRestProblem(
      await t.call('POST', '/v1/tokens', { abilities: ['webhook-endpoint:manage'], member_id: member.id }),
      'TOKEN_MISSING_ABILITY',
    );
  });
});
