/**
 * Projects, complete (DESIGN D6, D14, D16, D22): update, archive and unarchive, delete (refused while subscriptions are
 * live, taking the project's plans with it), the community bot (connect, permissions, replace, disconnect), linked
 * platform resources, and the payment-provider connection (`manual` here; `stripe` in stripe-connect.test.ts). Every
 * operation over REST, `update_project` over the tool server; every event emitted is read from the outbox and checked
 * against its published JSON Schema. Against DynamoDB Local, with an injected clock.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { keys } from '../../shared/store/keys.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { caller, rest, tool } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let project: { id: string; name: string };
/** Events of the team already returned by {@link newEvents}. */
let eventCursor: TeamEventCursor;

/** The team's outbox events not returned before, oldest first, each checked against its published schema. */
function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}

const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const { call } = caller(() => ({ runtime, token: team.token }));
const projectPath = () => `/v1/projects/${project.id}`;

/** Simulates the subscriptions use case's counter of live subscriptions on an item (absent = 0). */
async function setLiveSubscriptions(key: Record<string, unknown>, count: number): Promise<void> {
  await runtime.store.update({
    Key: key,
    UpdateExpression: 'SET live_subscription_count = :count',
    ExpressionAttributeValues: { ':count': count },
  });
}

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  const created = await call('POST', '/v1/projects', {
    name: 'Book club',
    platform_type: 'telegram',
    description: 'Monthly reads',
  });
  expect(created.status).toBe(201);
  project = created.json;
  expect(created.json).toMatchObject({
    status: 'active',
    bot: null,
    payment_provider: null,
    resources: [],
    archived_at: null,
  });
  expect(types(await newEvents()).at(-1)).toBe('project.created'); // after the team's own events, if any
});

describe('update', () => {
  it('changes name and description over REST and the tool, emits project.updated, and writes nothing for no change', async () => {
    clock.advance(1_000);
    const updated = await call('POST', projectPath(), { name: 'Reading club', description: null });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ id: project.id, name: 'Reading club', description: null });
    expect(updated.json.updated_at > updated.json.created_at).toBe(true);
    const [event] = await newEvents();
    expect(event).toMatchObject({
      type: 'project.updated',
      project_id: project.id,
      data: { project: { name: 'Reading club', description: null } },
    });

    const viaTool = await tool(runtime, team.principal, 'update_project', {
      project_id: project.id,
      description: 'Back again',
    });
    expect(viaTool.isError).toBeFalsy();
    expect(viaTool.structuredContent).toMatchObject({ name: 'Reading club', description: 'Back again' });
    expect(types(await newEvents())).toEqual(['project.updated']);

    const before = await domainSnapshot(runtime.store);
    const same = await call('POST', projectPath(), { name: 'Reading club' });
    expect(same.json.name).toBe('Reading club');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('refuses unknown fields and bad values, writing nothing', async () => {
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(await call('POST', projectPath(), { name: 'x', status: 'archived' }), 'VALIDATION_FAILED');
    expectRestProblem(await call('POST', projectPath(), { name: '' }), 'VALIDATION_FAILED');
    expectToolProblem(
      await tool(runtime, team.principal, 'update_project', { project_id: project.id, platform_type: 'discord' }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await call('POST', `/v1/projects/${randomUUID()}`, { name: 'Ghost' }), 'NOT_FOUND');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('replays a retried update with the same Idempotency-Key instead of applying it twice', async () => {
    const key = randomUUID();
    const first = await call(
      'POST',
      projectPath(),
      { name: 'Once' },
      { token: team.token, headers: { 'Idempotency-Key': key } },
    );
    const again = await call(
      'POST',
      projectPath(),
      { name: 'Once' },
      { token: team.token, headers: { 'Idempotency-Key': key } },
    );
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(types(await newEvents())).toEqual(['project.updated']);
  });
});

describe('archive and unarchive', () => {
  it('archives and restores, refusing repeats and the writes an archived project cannot take', async () => {
    const archived = await call('POST', `${projectPath()}/archive`);
    expect(archived.json).toMatchObject({ status: 'archived', archived_at: expect.any(String) });
    expectRestProblem(await call('POST', `${projectPath()}/archive`), 'CONFLICT');
    const before = await domainSnapshot(runtime.store);
    for (const [method, suffix, body] of [
      ['PUT', '/bot', { token: `42:${'a'.repeat(30)}` }],
      ['POST', '/resources', { kind: 'channel', platform_resource_id: '-100123' }],
      ['PUT', '/payment-provider', { provider: 'manual' }],
      ['POST', '/plans', { name: 'Gold', amount: 500, currency: 'USD', interval: 'month' }],
    ] as const) {
      const refused = expectRestProblem(await call(method, `${projectPath()}${suffix}`, body), 'CONFLICT');
      expect(refused.detail).toContain('archived');
    }
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    // Renaming an archived project still makes sense.
    expect((await call('POST', projectPath(), { name: 'Old club' })).json).toMatchObject({
      name: 'Old club',
      status: 'archived',
    });
    const listed = await rest(runtime, {
      method: 'GET',
      path: '/v1/projects',
      token: team.token,
      query: { status: 'archived' },
    });
    expect(listed.json.data.map((item: { id: string }) => item.id)).toEqual([project.id]);
    const restored = await call('POST', `${projectPath()}/unarchive`);
    expect(restored.json).toMatchObject({ status: 'active', archived_at: null });
    expectRestProblem(await call('POST', `${projectPath()}/unarchive`), 'CONFLICT');
    expect(types(await newEvents())).toEqual(['project.archived', 'project.updated', 'project.unarchived']);
  });
});

describe('the community bot', () => {
  // Connecting with a token, the webhook and the events are covered against a fake Bot API in telegram.test.ts.
  it('refuses a bot on a platform that cannot connect one, the old manual body, and disconnecting without a bot', async () => {
    const web = (await call('POST', '/v1/projects', { name: 'Site', platform_type: 'web' })).json;
    await newEvents();
    const refused = expectRestProblem(
      await call('PUT', `/v1/projects/${web.id}/bot`, { token: `42:${'a'.repeat(30)}` }),
      'VALIDATION_FAILED',
    );
    expect(refused.detail).toContain('connectable platforms: telegram, discord');
    expectRestProblem(
      await call('PUT', `${projectPath()}/bot`, { platform_bot_id: '1', permissions: [] }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await call('DELETE', `${projectPath()}/bot`), 'CONFLICT');
    expect(await newEvents()).toEqual([]);
  });
});

describe('linked resources', () => {
  it('links and unlinks resources of the platform’s kinds, refusing duplicates and other kinds', async () => {
    const linked = await call('POST', `${projectPath()}/resources`, {
      kind: 'channel',
      platform_resource_id: '-100200',
      name: 'Readers',
    });
    expect(linked.status).toBe(201);
    expect(linked.json).toEqual({
      id: expect.any(String),
      project_id: project.id,
      kind: 'channel',
      platform_resource_id: '-100200',
      name: 'Readers',
      linked_at: expect.any(String),
    });
    const group = (await call('POST', `${projectPath()}/resources`, { kind: 'group', platform_resource_id: '-100300' }))
      .json;
    expect(group.name).toBeNull();
    let events = await newEvents();
    expect(types(events)).toEqual(['project.resource_linked', 'project.resource_linked']);
    expect(events[0].data).toMatchObject({ resource: linked.json, project: { resources: [linked.json] } });

    expect((await call('GET', projectPath())).json.resources).toEqual([linked.json, group]);
    expectRestProblem(
      await call('POST', `${projectPath()}/resources`, { kind: 'channel', platform_resource_id: '-100200' }),
      'CONFLICT',
    );
    const wrongKind = expectRestProblem(
      await call('POST', `${projectPath()}/resources`, { kind: 'role', platform_resource_id: '99' }),
      'VALIDATION_FAILED',
    );
    expect(wrongKind.errors?.[0]).toMatchObject({ path: 'kind' });
    expectRestProblem(
      await call('POST', `${projectPath()}/resources`, { kind: 'planet', platform_resource_id: '99' }),
      'VALIDATION_FAILED',
    );

    const unlinked = await call('DELETE', `${projectPath()}/resources/${linked.json.id}`);
    expect(unlinked.json).toEqual({ id: linked.json.id, deleted: true });
    events = await newEvents();
    expect(types(events)).toEqual(['project.resource_unlinked']);
    expect(events[0].data).toMatchObject({ resource: linked.json, project: { resources: [group] } });
    expectRestProblem(await call('DELETE', `${projectPath()}/resources/${linked.json.id}`), 'NOT_FOUND');
  });

  it('loses no link under concurrent writes: every answered link is stored, with exactly one event each', async () => {
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        call('POST', `${projectPath()}/resources`, { kind: 'group', platform_resource_id: `g${index}` }),
      ),
    );
    const created = replies.filter((reply) => reply.status === 201);
    for (const refused of replies.filter((reply) => reply.status !== 201)) expectRestProblem(refused, 'CONFLICT');
    expect(created.length).toBeGreaterThan(0);
    const stored = (await call('GET', projectPath())).json.resources
      .map((resource: { id: string }) => resource.id)
      .sort();
    expect(stored).toEqual(created.map((reply) => reply.json.id).sort());
    expect(types(await newEvents())).toEqual(created.map(() => 'project.resource_linked'));
  });
});

describe('the payment provider', () => {
  it('connects manual, refuses providers that are not connectable, and disconnects only without live subscriptions', async () => {
    const paypal = expectRestProblem(
      await call('PUT', `${projectPath()}/payment-provider`, { provider: 'paypal' }),
      'VALIDATION_FAILED',
    );
    expect(paypal.detail + JSON.stringify(paypal.errors)).toContain('manual');
    expect(paypal.detail + JSON.stringify(paypal.errors)).toContain('stripe');
    // Stripe needs its key and signing secret; manual takes neither (Stripe itself:
    // test/integration/stripe-connect.test.ts).
    expect(
      expectRestProblem(
        await call('PUT', `${projectPath()}/payment-provider`, { provider: 'stripe' }),
        'VALIDATION_FAILED',
      ).errors!.map((error) => error.path),
    ).toEqual(['secret_key', 'webhook_secret']);
    expect(
      expectRestProblem(
        await call('PUT', `${projectPath()}/payment-provider`, {
          provider: 'manual',
          webhook_secret: 'whsec_abcdefghijklmnop',
        }),
        'VALIDATION_FAILED',
      ).errors!.map((error) => error.path),
    ).toEqual(['webhook_secret']);
    expectRestProblem(
      await call('PUT', `${projectPath()}/payment-provider`, { provider: 'cash' }),
      'VALIDATION_FAILED',
    );

    const connected = await call('PUT', `${projectPath()}/payment-provider`, { provider: 'manual' });
    expect(connected.json.payment_provider).toEqual({
      provider: 'manual',
      connected_at: expect.any(String),
      livemode: null,
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['project.payment_provider_connected']);
    expect(events[0].data.payment_provider).toBe('manual');
    await call('PUT', `${projectPath()}/payment-provider`, { provider: 'manual' });
    expect(await newEvents()).toEqual([]);

    await setLiveSubscriptions(keys.project(team.team.id, project.id), 2);
    expect(expectRestProblem(await call('DELETE', `${projectPath()}/payment-provider`), 'CONFLICT').detail).toContain(
      '2 live subscription',
    );
    await setLiveSubscriptions(keys.project(team.team.id, project.id), 0);
    const disconnected = await call('DELETE', `${projectPath()}/payment-provider`);
    expect(disconnected.json.payment_provider).toBeNull();
    events = await newEvents();
    expect(types(events)).toEqual(['project.payment_provider_disconnected']);
    expect(events[0].data.payment_provider).toBe('manual');
    expectRestProblem(await call('DELETE', `${projectPath()}/payment-provider`), 'CONFLICT');
  });
});

describe('delete', () => {
  it('is refused while subscriptions are live, then deletes the project with its plans', async () => {
    const plan = (
      await call('POST', `${projectPath()}/plans`, { name: 'Gold', amount: 900, currency: 'EUR', interval: 'month' })
    ).json;
    await call('POST', `${projectPath()}/resources`, { kind: 'channel', platform_resource_id: '-1' });
    await newEvents();
    await setLiveSubscriptions(keys.project(team.team.id, project.id), 1);
    const before = await domainSnapshot(runtime.store);
    expect(expectRestProblem(await call('DELETE', projectPath()), 'CONFLICT').detail).toContain('live subscription');
    expect(await domainSnapshot(runtime.store)).toEqual(before);

    await setLiveSubscriptions(keys.project(team.team.id, project.id), 0);
    const deleted = await call('DELETE', projectPath());
    expect(deleted.json).toEqual({ id: project.id, deleted: true });
    const events = await newEvents();
    expect(types(events)).toEqual(['project.deleted']);
    expect(events[0].data.project).toMatchObject({ id: project.id, name: 'Book club' });
    expectRestProblem(await call('GET', projectPath()), 'NOT_FOUND');
    expectRestProblem(await call('GET', `/v1/plans/${plan.id}`), 'NOT_FOUND');
    expectRestProblem(await call('DELETE', projectPath()), 'NOT_FOUND');
    expect(await runtime.store.get(keys.plan(team.team.id, plan.id))).toBeUndefined();
  });

  it('needs project:delete, and a project-scoped token reaches only its own project', async () => {
    const other = (await call('POST', '/v1/projects', { name: 'Other', platform_type: 'discord' })).json;
    const updater = await seedToken(runtime.store, clock, { teamId: team.team.id, abilities: ['project:update'] });
    expectRestProblem(
      await call('DELETE', projectPath(), undefined, { token: updater.token }),
      'TOKEN_MISSING_ABILITY',
    );
    const scoped = await seedToken(runtime.store, clock, { teamId: team.team.id, projectIds: [project.id] });
    expectRestProblem(
      await call('POST', `/v1/projects/${other.id}/archive`, undefined, { token: scoped.token }),
      'NOT_FOUND',
    );
    expect((await call('POST', `${projectPath()}/archive`, undefined, { token: scoped.token })).status).toBe(200);
  });
});
