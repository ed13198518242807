/**
 * Roles (DESIGN D6, D19): the six built-in roles in every team (constants merged into
 * reads; never changed or deleted), roles of the team's own with abilities never wider than the caller's
 * and an optional project scope, names unique in any case, the assignment counter that keeps an assigned
 * role from being deleted, over REST and the `list_roles` / `get_role` tools. Every event is read from
 * the outbox and checked against its published JSON Schema. Against DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import type { ManualClock } from '../../shared/clock.js';
import { BUILT_IN_ROLE_IDS, BUILT_IN_ROLE_NAMES } from '../../shared/domain/roles/built-in.js';
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

/** Every outbox event of a team, oldest first, each checked against its published schema. */
async function eventsOf(teamId: string): Promise<EventEnvelope[]> {
  const events = await teamEvents(runtime.store, teamId);
  for (const event of events) if (/^(team|role|group)\./.test(event.type)) expect(event.project_id).toBeNull();
  return events;
}

async function setup() {
  const seeded = await seedTeam(runtime.store, clock);
  const { call } = caller(() => ({ runtime, token: seeded.token }));
  const create = async (body: Record<string, unknown>) => {
    const reply = await call('POST', '/v1/roles', body);
    expect(reply.status, reply.text).toBe(201);
    return reply.json;
  };
  return { ...seeded, call, create };
}

const ids = (body: { data: { id: string }[] }) => body.data.map((item) => item.id);

describe('built-in roles', () => {
  it('exist in every team, first in the list, over REST and list_roles / get_role', async () => {
    const t = await setup();
    const listed = await t.call('GET', '/v1/roles');
    expect(listed.status).toBe(200);
    expect(listed.json.data.map((role: { name: string }) => role.name)).toEqual([...BUILT_IN_ROLE_NAMES]);
    expect(listed.json.next_cursor).toBeNull();
    const owner = listed.json.data[0];
    expect(owner).toMatchObject({ id: BUILT_IN_ROLE_IDS.owner, built_in: true, project_ids: null });
    expect(owner.abilities).toEqual([...ABILITY_VALUES]);
    const admin = listed.json.data[1];
    expect(admin.abilities).not.toContain('team:delete');
    const viewer = listed.json.data[5];
    expect(viewer.abilities).not.toContain('project-user:view');
    expect(viewer.abilities.every((ability: string) => /:view(-any)?$/.test(ability))).toBe(true);

    const viaTool = await tool(runtime, t.principal, 'list_roles', { built_in: true });
    expect(viaTool.isError).toBeFalsy();
    expect(viaTool.structuredContent).toEqual(listed.json);
    const one = await tool(runtime, t.principal, 'get_role', { id: BUILT_IN_ROLE_IDS.support });
    expect(one.structuredContent).toEqual(listed.json.data[4]);
    expect((await t.call('GET', `/v1/roles/${BUILT_IN_ROLE_IDS.analyst}`)).json).toEqual(listed.json.data[3]);
    expect((await t.call('GET', '/v1/roles', undefined, { query: { built_in: 'false' } })).json).toEqual({
      data: [],
      next_cursor: null,
    });
  });

  it('cannot be changed or deleted, and their names cannot be taken (any case)', async () => {
    const t = await setup();
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(await t.call('POST', `/v1/roles/${BUILT_IN_ROLE_IDS.viewer}`, { name: 'Watcher' }), 'CONFLICT');
    expectRestProblem(await t.call('DELETE', `/v1/roles/${BUILT_IN_ROLE_IDS.owner}`), 'CONFLICT');
    expectRestProblem(await t.call('POST', '/v1/roles', { name: 'ADMIN', abilities: ['team:view'] }), 'CONFLICT');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });
});

describe('roles of the team’s own', () => {
  it('are created, read, changed and deleted, each change with its event', async () => {
    const t = await setup();
    const project = (await t.call('POST', '/v1/projects', { name: 'P', platform_type: 'discord' })).json;
    const role = await t.create({
      name: 'Moderators',
      description: 'Keep the peace',
      abilities: ['project-user:ban', 'project-user:kick', 'project-user:ban'],
      project_ids: [project.id],
    });
    expect(role).toMatchObject({
      name: 'Moderators',
      description: 'Keep the peace',
      built_in: false,
      abilities: ['project-user:ban', 'project-user:kick'],
      project_ids: [project.id],
    });
    expect((await t.call('GET', `/v1/roles/${role.id}`)).json).toEqual(role);
    expect((await tool(runtime, t.principal, 'get_role', { id: role.id })).structuredContent).toEqual(role);

    const updated = await t.call('POST', `/v1/roles/${role.id}`, {
      name: 'Mods',
      abilities: ['project-user:kick'],
      project_ids: null,
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toMatchObject({
      id: role.id,
      name: 'Mods',
      abilities: ['project-user:kick'],
      project_ids: null,
      description: 'Keep the peace',
    });
    // The old name is free again, the new one taken.
    await t.create({ name: 'moderators', abilities: ['team:view'] });
    expectRestProblem(await t.call('POST', '/v1/roles', { name: 'MODS', abilities: ['team:view'] }), 'CONFLICT');

    const count = (await eventsOf(t.team.id)).length;
    expect((await t.call('POST', `/v1/roles/${role.id}`, { name: 'Mods' })).status).toBe(200);
    expect((await eventsOf(t.team.id)).length).toBe(count); // nothing changed, nothing emitted

    const deleted = await t.call('DELETE', `/v1/roles/${role.id}`);
    expect(deleted.json).toEqual({ id: role.id, deleted: true });
    expectRestProblem(await t.call('GET', `/v1/roles/${role.id}`), 'NOT_FOUND');
    expectRestProblem(await t.call('DELETE', `/v1/roles/${role.id}`), 'NOT_FOUND');
    await t.create({ name: 'Mods', abilities: ['team:view'] }); // its name was freed

    const events = (await eventsOf(t.team.id)).filter((event) => event.type.startsWith('role.'));
    expect(events.map((event) => event.type)).toEqual([
      'role.created',
      'role.updated',
      'role.created',
      'role.deleted',
      'role.created',
    ]);
    expect(events[0].data).toEqual({ role });
    expect(events[1].data).toEqual({ role: updated.json });
  });

  it('never grant abilities the caller lacks, name the missing ones, and check their projects', async () => {
    const t = await setup();
    const weak = await seedToken(runtime.store, clock, {
      teamId: t.team.id,
      abilities: ['role:create', 'role:update', 'team:view'],
    });
    const role = await t.create({ name: 'Viewers of teams', abilities: ['team:view'] });
    const before = await domainSnapshot(runtime.store);
    const refused = expectRestProblem(
      await t.call(
        'POST',
        '/v1/roles',
        { name: 'Too much', abilities: ['team:view', 'project:delete', 'token:create'] },
        { token: weak.token },
      ),
      'TOKEN_MISSING_ABILITY',
    );
    expect(refused.detail).toContain('project:delete');
    expect(refused.detail).toContain('token:create');
    expect(refused.detail).not.toContain('team:view');
    expectRestProblem(
      await t.call('POST', `/v1/roles/${role.id}`, { abilities: ['billing:update'] }, { token: weak.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await t.call('POST', '/v1/roles', { name: 'Elsewhere', abilities: ['team:view'], project_ids: [randomUUID()] }),
      'NOT_FOUND',
    );
    expectRestProblem(await t.call('POST', '/v1/roles', { name: 'Nothing', abilities: [] }), 'VALIDATION_FAILED');
    expectRestProblem(await t.call('POST', '/v1/roles', { name: 'Root', abilities: ['root'] }), 'VALIDATION_FAILED');
    expectRestProblem(
      await t.call('POST', '/v1/roles', { name: 'Extra', abilities: ['team:view'], built_in: true }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await t.call('POST', `/v1/roles/${randomUUID()}`, { name: 'Ghost' }), 'NOT_FOUND');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('cannot be deleted while a member or a group holds them', async () => {
    const t = await setup();
    const role = await t.create({ name: 'Held', abilities: ['team:view'] });
    const member = (
      await t.call('POST', '/v1/team-members/invitations', { email: 'h@example.com', name: 'H', role_ids: [role.id] })
    ).json;
    const group = (await t.call('POST', '/v1/groups', { name: 'Holders', role_ids: [role.id] })).json;
    const before = await domainSnapshot(runtime.store);
    const refused = expectRestProblem(await t.call('DELETE', `/v1/roles/${role.id}`), 'CONFLICT');
    expect(refused.detail).toContain('still assigned');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    await t.call('POST', `/v1/team-members/${member.id}`, { role_ids: [BUILT_IN_ROLE_IDS.viewer] });
    expectRestProblem(await t.call('DELETE', `/v1/roles/${role.id}`), 'CONFLICT'); // the group still holds it
    await t.call('DELETE', `/v1/groups/${group.id}`);
    expect((await t.call('DELETE', `/v1/roles/${role.id}`)).status).toBe(200);
  });

  it('never let a deletion and an assignment both succeed under a race', async () => {
    const t = await setup();
    for (let round = 0; round < 4; round++) {
      const role = await t.create({ name: `Raced ${round}`, abilities: ['team:view'] });
      const [deleted, invited] = await Promise.all([
        t.call('DELETE', `/v1/roles/${role.id}`),
        t.call('POST', '/v1/team-members/invitations', {
          email: `race${round}@example.com`,
          name: 'Racer',
          role_ids: [role.id],
        }),
      ]);
      expect(
        [deleted.status, invited.status].filter((status) => status < 300),
        `${deleted.text} ${invited.text}`,
      ).toHaveLength(1);
      if (deleted.status === 200) expectRestProblem(invited, 'NOT_FOUND');
      else {
        expectRestProblem(deleted, 'CONFLICT');
        expect(invited.json.role_ids).toEqual([role.id]);
        expect((await t.call('GET', `/v1/roles/${role.id}`)).status).toBe(200);
      }
    }
  });

  it('replay a creation with the same Idempotency-Key', async () => {
    const t = await setup();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await t.call('POST', '/v1/roles', { name: 'Once', abilities: ['team:view'] }, { headers });
    const again = await t.call('POST', '/v1/roles', { name: 'Once', abilities: ['team:view'] }, { headers });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect((await eventsOf(t.team.id)).filter((event) => event.type === 'role.created')).toHaveLength(1);
  });

  it('page with the built-in roles through one cursor, without gaps or repeats', async () => {
    const t = await setup();
    const own = [];
    for (let index = 0; index < 3; index++)
      own.push((await t.create({ name: `Paged ${index}`, abilities: ['team:view'] })).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await t.call('GET', '/v1/roles', undefined, {
        query: cursor ? { limit: '4', cursor } : { limit: '4' },
      });
      expect(page.status, page.text).toBe(200);
      expect(page.json.data.length).toBeLessThanOrEqual(4);
      seen.push(...ids(page.json));
      cursor = page.json.next_cursor ?? undefined;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
    expect(seen.slice(0, 6)).toEqual(Object.values(BUILT_IN_ROLE_IDS));
    expect(seen.slice(6).sort()).toEqual(own.sort());
    const onlyOwn = await tool(runtime, t.principal, 'list_roles', { built_in: false, limit: 2 });
    expect(onlyOwn.structuredContent.data).toHaveLength(2);
    expectRestProblem(
      await t.call('GET', '/v1/roles', undefined, {
        query: { cursor: Buffer.from(JSON.stringify({ pk: 'TEAM#x', sk: 'ROLE#y' })).toString('base64url') },
      }),
      'VALIDATION_FAILED',
    );
  });

  it('are team-wide data: a project-scoped token is refused', async () => {
    const t = await setup();
    const project = (await t.call('POST', '/v1/projects', { name: 'P', platform_type: 'discord' })).json;
    const scoped = await seedToken(runtime.store, clock, { teamId: t.team.id, projectIds: [project.id] });
    expectRestProblem(await t.call('GET', '/v1/roles', undefined, { token: scoped.token }), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(
      await t.call('POST', '/v1/roles', { name: 'Scoped', abilities: ['team:view'] }, { token: scoped.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectToolProblem(
      await tool(runtime, scoped.principal, 'get_role', { id: BUILT_IN_ROLE_IDS.owner }),
      'TOKEN_MISSING_ABILITY',
    );
  });
});
