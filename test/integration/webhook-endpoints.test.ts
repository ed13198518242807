/**
 * Webhook endpoints beyond CRUD (DESIGN D6, D8): the 50-endpoint cap is an atomic
 * counter that holds under a race, re-pointing an endpoint (url or events) needs the events' abilities
 * and makes the caller its owner, and fan-out re-reads the owner's abilities, so a revoked owner's
 * endpoint receives nothing more. Against DynamoDB Local, with an injected clock.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { WebhookEventName } from '../../shared/catalogues/webhook-events.js';
import type { ManualClock } from '../../shared/clock.js';
import { MAX_ENDPOINTS_PER_TEAM } from '../../shared/domain/webhook-endpoints/policy.js';
import { changeTier } from '../../shared/domain/billing/changes.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { createWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import { expectRestProblem } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;

const endpointBody = (index: number) => ({
  name: `Hook ${index}`,
  url: `https://receiver.example/${index}`,
  events: ['project.created'] as WebhookEventName[],
});
const create = (token: string, index: number) =>
  rest(runtime, { method: 'POST', path: '/v1/webhook-endpoints', token, body: endpointBody(index) });

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
});

describe('the endpoint cap (D8)', () => {
  it('admits exactly the last 10 of 20 concurrent creations once 40 exist, and one more after a delete', async () => {
    await changeTier(runtime, team.team.id, 'business'); // no tier limit (D20): the D8 cap is what stops it
    for (let index = 0; index < MAX_ENDPOINTS_PER_TEAM - 10; index++)
      await createWebhookEndpoint(runtime, team.principal, endpointBody(index));
    const replies = await Promise.all(Array.from({ length: 20 }, (_, index) => create(team.token, 100 + index)));
    const created = replies.filter((reply) => reply.status === 201);
    expect(created).toHaveLength(10);
    for (const refused of replies.filter((reply) => reply.status !== 201)) expectRestProblem(refused, 'CONFLICT');
    const listed = await rest(runtime, {
      method: 'GET',
      path: '/v1/webhook-endpoints',
      token: team.token,
      query: { limit: '100' },
    });
    expect(listed.json.data).toHaveLength(MAX_ENDPOINTS_PER_TEAM);
    expectRestProblem(await create(team.token, 200), 'CONFLICT');
    expect(
      (
        await rest(runtime, {
          method: 'DELETE',
          path: `/v1/webhook-endpoints/${created[0].json.id}`,
          token: team.token,
        })
      ).status,
    ).toBe(200);
    expect((await create(team.token, 201)).status).toBe(201);
    expectRestProblem(await create(team.token, 202), 'CONFLICT');
  });
});

describe('the endpoint owner (D6)', () => {
  it('refuses to re-point an endpoint to a caller lacking its events’ abilities, and makes a capable caller the owner', async () => {
    const endpoint = (await create(team.token, 1)).json;
    const manager = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['webhook-endpoint:manage'],
    });
    const moved = await rest(runtime, {
      method: 'POST',
      path: `/v1/webhook-endpoints/${endpoint.id}`,
      token: manager.token,
      body: { url: 'https://attacker.example/steal' },
    });
    expectRestProblem(moved, 'TOKEN_MISSING_ABILITY');
    const renamed = await rest(runtime, {
      method: 'POST',
      path: `/v1/webhook-endpoints/${endpoint.id}`,
      token: manager.token,
      body: { name: 'Renamed' },
    });
    expect(renamed.json).toMatchObject({ name: 'Renamed', url: endpoint.url });
    // The new owner's abilities decide what the endpoint receives: a capable token re-points it, then is revoked.
    const capable = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['webhook-endpoint:manage', 'project:view', 'token:revoke'],
    });
    const repointed = await rest(runtime, {
      method: 'POST',
      path: `/v1/webhook-endpoints/${endpoint.id}`,
      token: capable.token,
      body: { url: 'https://receiver.example/new' },
    });
    expect(repointed.json.url).toBe('https://receiver.example/new');
    await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: team.token,
      body: { name: 'Seen', platform_type: 'discord' },
    });
    await relayOutbox(runtime, clock.nowMs());
    expect(runtime.queued).toHaveLength(1);
    expect(
      (await rest(runtime, { method: 'DELETE', path: `/v1/tokens/${capable.id}`, token: team.token })).status,
    ).toBe(200);
    await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: team.token,
      body: { name: 'Not seen', platform_type: 'discord' },
    });
    expect(await relayOutbox(runtime, clock.nowMs())).toBeGreaterThan(0);
    expect(runtime.queued).toHaveLength(1); // the revoked owner's endpoint got no delivery
  });
});
