/**
 * Groups (DESIGN D6, D19): named sets of team members with roles. Creation, changes and
 * deletion keep the group's member list, each member's group list and the roles' assignment counters in
 * one transaction with the `group.*` event; over REST and the `list_groups` / `get_group` tools. Every
 * event is read from the outbox and checked against its published JSON Schema. Against DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { caller, tool } from '../support/calls.js';
import { teamEvents } from '../support/events.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;

beforeAll(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
});

/** Every `group.*` outbox event of a team, oldest first, each checked against its published schema. */
async function groupEventsOf(teamId: string): Promise<EventEnvelope[]> {
  const groupEvents = (await teamEvents(runtime.store, teamId)).filter((event) => event.type.startsWith('group.'));
  for (const event of groupEvents) expect(event.project_id).toBeNull();
  return groupEvents;
}

async function setup() {
  const seeded = await seedTeam(runtime.store, clock);
  const { call } = caller(() => ({ runtime, token: seeded.token }));
  const member = async (email: string) => {
    const reply = await call('POST', '/v1/team-members/invitations', {
      email,
      name: email,
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    expect(reply.status, reply.text).toBe(201);
    return reply.json as { id: string };
  };
  const groupsOf = async (memberId: string) => (await call('GET', `/v1/team-members/${memberId}`)).json.group_ids;
  return { ...seeded, call, member, groupsOf };
}

describe('groups', () => {
  it('are created with roles and members, read over REST and the tools, changed and deleted', async () => {
    const t = await setup();
    const ada = await t.member('ada@example.com');
    const bob = await t.member('bob@example.com');
    const role = (await t.call('POST', '/v1/roles', { name: 'Group role', abilities: ['team:view'] })).json;

    const created = await t.call('POST', '/v1/groups', {
      name: 'Editors',
      description: 'Write things',
      role_ids: [role.id, BUILT_IN_ROLE_IDS.developer],
      member_ids: [ada.id],
    });
    expect(created.status, created.text).toBe(201);
    const group = created.json;
    expect(group).toMatchObject({
      name: 'Editors',
      description: 'Write things',
      role_ids: [role.id, BUILT_IN_ROLE_IDS.developer],
      member_ids: [ada.id],
      member_count: 1,
    });
    expect(await t.groupsOf(ada.id)).toEqual([group.id]);
    expect((await t.call('GET', `/v1/groups/${group.id}`)).json).toEqual(group);
    expect((await tool(runtime, t.principal, 'get_group', { id: group.id })).structuredContent).toEqual(group);
    const listed = await tool(runtime, t.principal, 'list_groups', { member_id: ada.id });
    expect(listed.structuredContent).toEqual({ data: [group], next_cursor: null });
    expect((await t.call('GET', '/v1/groups', undefined, { query: { member_id: bob.id } })).json.data).toEqual([]);
    expect((await t.call('GET', '/v1/groups', undefined, { query: { role_id: role.id } })).json.data).toEqual([group]);

    // Swap the members and drop a role: both members' lists and the role's counter follow.
    const changed = await t.call('POST', `/v1/groups/${group.id}`, {
      member_ids: [bob.id],
      role_ids: [BUILT_IN_ROLE_IDS.developer],
      name: 'Writers',
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      name: 'Writers',
      member_ids: [bob.id],
      member_count: 1,
      role_ids: [BUILT_IN_ROLE_IDS.developer],
    });
    expect(await t.groupsOf(ada.id)).toEqual([]);
    expect(await t.groupsOf(bob.id)).toEqual([group.id]);
    expect((await t.call('DELETE', `/v1/roles/${role.id}`)).status).toBe(200); // no longer assigned

    // Nothing to change: nothing written.
    const before = await domainSnapshot(runtime.store);
    expect((await t.call('POST', `/v1/groups/${group.id}`, { name: 'Writers', member_ids: [bob.id] })).status).toBe(
      200,
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);

    const deleted = await t.call('DELETE', `/v1/groups/${group.id}`);
    expect(deleted.json).toEqual({ id: group.id, deleted: true });
    expect(await t.groupsOf(bob.id)).toEqual([]);
    expectRestProblem(await t.call('GET', `/v1/groups/${group.id}`), 'NOT_FOUND');
    expectToolProblem(await tool(runtime, t.principal, 'get_group', { id: group.id }), 'NOT_FOUND');

    const events = await groupEventsOf(t.team.id);
    expect(events.map((event) => event.type)).toEqual(['group.created', 'group.updated', 'group.deleted']);
    expect(events[0].data).toEqual({ group });
    expect(events[1].data).toEqual({ group: changed.json });
    expect(events[2].data).toEqual({ group: changed.json });
  });

  it('keep names unique in any case, and refuse unknown members, roles and fields', async () => {
    const t = await setup();
    await t.call('POST', '/v1/groups', { name: 'Team Red' });
    const other = (await t.call('POST', '/v1/groups', { name: 'Team Blue' })).json;
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(await t.call('POST', '/v1/groups', { name: 'team red' }), 'CONFLICT');
    expectRestProblem(await t.call('POST', `/v1/groups/${other.id}`, { name: 'TEAM RED' }), 'CONFLICT');
    expectRestProblem(await t.call('POST', '/v1/groups', { name: 'Ghosts', member_ids: [randomUUID()] }), 'NOT_FOUND');
    expectRestProblem(await t.call('POST', '/v1/groups', { name: 'Ghosts', role_ids: [randomUUID()] }), 'NOT_FOUND');
    expectRestProblem(await t.call('POST', '/v1/groups', { name: 'Ghosts', member_count: 3 }), 'VALIDATION_FAILED');
    expectRestProblem(await t.call('POST', '/v1/groups', { name: '' }), 'VALIDATION_FAILED');
    expectRestProblem(await t.call('POST', `/v1/groups/${randomUUID()}`, { name: 'Nobody' }), 'NOT_FOUND');
    expectRestProblem(await t.call('DELETE', `/v1/groups/${randomUUID()}`), 'NOT_FOUND');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('need group:manage-members for members and role:assign for roles, never beyond the caller', async () => {
    const t = await setup();
    const ada = await t.member('perm@example.com');
    const creator = await seedToken(runtime.store, clock, {
      teamId: t.team.id,
      abilities: ['group:create', 'group:update', 'team:view'],
    });
    const assigner = await seedToken(runtime.store, clock, {
      teamId: t.team.id,
      abilities: ['group:create', 'role:assign', 'team:view'],
    });
    const plain = (await t.call('POST', '/v1/groups', { name: 'Plain' })).json;
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(
      await t.call('POST', '/v1/groups', { name: 'With members', member_ids: [ada.id] }, { token: creator.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await t.call(
        'POST',
        '/v1/groups',
        { name: 'With roles', role_ids: [BUILT_IN_ROLE_IDS.viewer] },
        { token: creator.token },
      ),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await t.call('POST', `/v1/groups/${plain.id}`, { member_ids: [ada.id] }, { token: creator.token }),
      'TOKEN_MISSING_ABILITY',
    );
    const beyond = expectRestProblem(
      await t.call(
        'POST',
        '/v1/groups',
        { name: 'Owners', role_ids: [BUILT_IN_ROLE_IDS.owner] },
        { token: assigner.token },
      ),
      'TOKEN_MISSING_ABILITY',
    );
    expect(beyond.detail).toContain('team:delete');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    // A rename needs group:update only.
    expect(
      (await t.call('POST', `/v1/groups/${plain.id}`, { name: 'Renamed', description: null }, { token: creator.token }))
        .status,
    ).toBe(200);
  });

  it('refuse removed members and members already in the most groups', async () => {
    const t = await setup();
    const gone = await t.member('gone@example.com');
    await t.call('DELETE', `/v1/team-members/${gone.id}`);
    expectRestProblem(await t.call('POST', '/v1/groups', { name: 'Late', member_ids: [gone.id] }), 'CONFLICT');
    const busy = await t.member('busy@example.com');
    for (let index = 0; index < 10; index++)
      expect((await t.call('POST', '/v1/groups', { name: `G${index}`, member_ids: [busy.id] })).status).toBe(201);
    expect(await t.groupsOf(busy.id)).toHaveLength(10);
    expectRestProblem(await t.call('POST', '/v1/groups', { name: 'G10', member_ids: [busy.id] }), 'CONFLICT');
  });

  it('are team-wide data: a project-scoped token is refused', async () => {
    const t = await setup();
    const project = (await t.call('POST', '/v1/projects', { name: 'P', platform_type: 'discord' })).json;
    const scoped = await seedToken(runtime.store, clock, { teamId: t.team.id, projectIds: [project.id] });
    expectRestProblem(await t.call('GET', '/v1/groups', undefined, { token: scoped.token }), 'TOKEN_MISSING_ABILITY');
    expectToolProblem(await tool(runtime, scoped.principal, 'list_groups', {}), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(
      await t.call('POST', '/v1/groups', { name: 'Scoped' }, { token: scoped.token }),
      'TOKEN_MISSING_ABILITY',
    );
  });
});
