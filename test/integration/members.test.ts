/**
 * Members (DESIGN D17): platform membership updates recorded through
 * `recordPlatformMembership` (joins, leaves, profile changes; `member.joined`, `member.left`,
 * `member.updated`), the link to the subscriber with the same platform user id, `findMemberOfSubscriber`,
 * and the two member operations over REST (list per project with status filter and paging, read by id
 * alone). Every event is read from the outbox and checked against its published JSON Schema. Against
 * DynamoDB Local, with an injected clock.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import {
  recordPlatformMembership,
  type PlatformMembershipUpdate,
} from '../../shared/domain/members/platform-updates.js';
import { findMemberOfSubscriber } from '../../shared/domain/members/repository.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { caller } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let eventCursor: TeamEventCursor;

/** The team's outbox events not returned before, oldest first, each checked against its published schema. */
function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}

const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const { call } = caller(() => ({ runtime, token: team.token }));
const record = (update: Omit<PlatformMembershipUpdate, 'teamId' | 'projectId'>) =>
  recordPlatformMembership(runtime, { teamId: team.team.id, projectId, ...update });

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await call('POST', '/v1/projects', { name: 'Chat club', platform_type: 'telegram' })).json.id;
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

describe('platform membership updates', () => {
  it('records a join, a profile change, a leave and a rejoin, each once, with its event', async () => {
    const member = await record({ platformUserId: '1001', change: 'joined', username: 'grace', displayName: 'Grace' });
    expect(member).toEqual({
      id: expect.any(String),
      project_id: projectId,
      platform_user_id: '1001',
      username: 'grace',
      display_name: 'Grace',
      subscriber_id: null,
      status: 'joined',
      joined_at: member!.created_at,
      status_changed_at: member!.created_at,
      platform_error: null,
      created_at: member!.created_at,
      updated_at: member!.created_at,
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['member.joined']);
    expect(events[0].data).toEqual({ member, subscriber: null });
    expect(events[0].project_id).toBe(projectId);

    // The same join again changes nothing.
    expect(await record({ platformUserId: '1001', change: 'joined' })).toEqual(member);
    expect(types(await newEvents())).toEqual([]);

    clock.advance(1_000);
    const renamed = await record({ platformUserId: '1001', change: 'profile', username: 'grace_h' });
    expect(renamed).toMatchObject({ id: member!.id, username: 'grace_h', display_name: 'Grace', status: 'joined' });
    expect(types(await newEvents())).toEqual(['member.updated']);

    const left = await record({ platformUserId: '1001', change: 'left' });
    expect(left).toMatchObject({ status: 'left', joined_at: member!.joined_at });
    expect(await record({ platformUserId: '1001', change: 'left' })).toEqual(left);
    events = await newEvents();
    expect(types(events)).toEqual(['member.left']);

    clock.advance(1_000);
    const back = await record({ platformUserId: '1001', change: 'joined' });
    expect(back).toMatchObject({ id: member!.id, status: 'joined' });
    expect(back!.joined_at).not.toBe(member!.joined_at);
    expect(types(await newEvents())).toEqual(['member.joined']);
  });

  it('ignores a leave or profile change of an unknown person, and refuses an unknown project', async () => {
    const before = await domainSnapshot(runtime.store);
    expect(await record({ platformUserId: 'ghost', change: 'left' })).toBeNull();
    expect(await record({ platformUserId: 'ghost', change: 'profile', username: 'boo' })).toBeNull();
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    await expect(
      recordPlatformMembership(runtime, {
        teamId: team.team.id,
        projectId: randomUUID(),
        platformUserId: 'x',
        change: 'joined',
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('links a joining member to the subscriber with the same platform user id (both ways); findMemberOfSubscriber finds it', async () => {
    const subscriber = (
      await call('POST', `/v1/projects/${projectId}/subscribers`, {
        display_name: 'Linus',
        email: 'linus@example.com',
        consent: true,
        platform_user_id: '2002',
      })
    ).json;
    expect(await findMemberOfSubscriber(runtime.store, team.team.id, projectId, subscriber.id)).toBeNull();
    await newEvents();
    const member = await record({ platformUserId: '2002', change: 'joined', username: 'linus' });
    expect(member!.subscriber_id).toBe(subscriber.id);
    const events = await newEvents();
    expect(types(events)).toEqual(['member.joined']);
    expect(events[0].data).toMatchObject({
      member: { id: member!.id },
      subscriber: { id: subscriber.id, member_id: member!.id, email: 'linus@example.com' },
    });
    expect((await call('GET', `/v1/subscribers/${subscriber.id}`)).json.member_id).toBe(member!.id);
    expect(await findMemberOfSubscriber(runtime.store, team.team.id, projectId, subscriber.id)).toEqual(member);
    expect(await findMemberOfSubscriber(runtime.store, team.team.id, projectId, randomUUID())).toBeNull();
  });

  it('keeps a banned member banned when the platform reports a join', async () => {
    const subscriber = (await call('POST', `/v1/projects/${projectId}/subscribers`, { platform_user_id: '3003' })).json;
    await record({ platformUserId: '3003', change: 'joined' });
    await call('POST', `/v1/subscribers/${subscriber.id}/ban`, {});
    await newEvents();
    expect(await record({ platformUserId: '3003', change: 'joined' })).toMatchObject({ status: 'banned' });
    expect(types(await newEvents())).toEqual([]);
  });
});

describe('member operations', () => {
  it('lists a project’s members by status with paging and reads one by id alone', async () => {
    const ids: string[] = [];
    for (const user of ['a', 'b', 'c']) ids.push((await record({ platformUserId: user, change: 'joined' }))!.id);
    await record({ platformUserId: 'b', change: 'left' });
    const all = await call('GET', `/v1/projects/${projectId}/members`);
    expect(all.status, all.text).toBe(200);
    expect(all.json.data.map((m: { id: string }) => m.id).sort()).toEqual([...ids].sort());
    const left = await call('GET', `/v1/projects/${projectId}/members`, undefined, {
      token: team.token,
      query: { status: 'left' },
    });
    expect(left.json.data.map((m: { platform_user_id: string }) => m.platform_user_id)).toEqual(['b']);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('GET', `/v1/projects/${projectId}/members`, undefined, {
        token: team.token,
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
      });
      paged.push(...page.json.data.map((m: { id: string }) => m.id));
      cursor = page.json.next_cursor ?? undefined;
    } while (cursor);
    expect(paged.sort()).toEqual([...ids].sort());
    const one = await call('GET', `/v1/members/${ids[0]}`);
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ id: ids[0], platform_user_id: 'a', status: 'joined' });

    expectRestProblem(await call('GET', `/v1/members/${randomUUID()}`), 'NOT_FOUND');
    expectRestProblem(await call('GET', `/v1/projects/${randomUUID()}/members`), 'NOT_FOUND');
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/members`, undefined, {
        token: team.token,
        query: { status: 'gone' },
      }),
      'VALIDATION_FAILED',
    );
    const other = (await call('POST', '/v1/projects', { name: 'Other', platform_type: 'web' })).json.id;
    const scoped = await seedToken(runtime.store, clock, { teamId: team.team.id, projectIds: [other] });
    expectRestProblem(await call('GET', `/v1/members/${ids[0]}`, undefined, { token: scoped.token }), 'NOT_FOUND');
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/members`, undefined, { token: scoped.token }),
      'NOT_FOUND',
    );
  });
});
