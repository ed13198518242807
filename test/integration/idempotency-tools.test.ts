/**
 * Idempotency (interface "REST" writes, DESIGN D3) on REST (`Idempotency-Key` header) and on write tools
 * (`idempotency_key` argument), against DynamoDB Local: UUID keys only; keys per team, kept 24 hours, bound to the
 * token that made the first request; a retry of the same request by that token replays status, body and headers with
 * `Idempotent-Replay: true`; the same key for any other request (other body, other route, other surface) is
 * IDEMPOTENCY_KEY_REUSED (422); a retry while the first still runs is IDEMPOTENCY_KEY_IN_USE (409); a write that failed
 * is not stored; 4 concurrent duplicates have exactly one effect (counted in the table). The stored record never holds
 * a secret in the clear. Subscription transitions take their key 'in-transaction': the same rules, except that
 * concurrent duplicates all get the first response (no IDEMPOTENCY_KEY_IN_USE), still with exactly one effect.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { beginIdempotentRequest, requestFingerprint } from '../../shared/limits/idempotency.js';
import {
  countProjects,
  domainSnapshot,
  expectRestProblem,
  expectToolProblem,
  gatedStore,
  scanTable,
  withStore,
} from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { keys } from '../../shared/store/keys.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { teamEvents } from '../support/events.js';
import {
  RACERS,
  clock,
  createProjectCall,
  isProjectTransaction,
  project,
  runtime,
  teamId,
  token,
  world,
  useIdempotencyFixture,
} from '../support/fixtures/idempotency.js';

useIdempotencyFixture();

describe('write tools: idempotency_key', () => {
  it('replays a create_project result (marked in _meta), with one project in the table', async () => {
    const key = randomUUID();
    const before = await countProjects(runtime.store, teamId);
    const first = await tool(runtime, world.a.principal, 'create_project', { ...project(), idempotency_key: key });
    expect(first.isError).toBeUndefined();
    const replay = await tool(runtime, world.a.principal, 'create_project', { ...project(), idempotency_key: key });
    expect(replay.structuredContent).toEqual(first.structuredContent);
    expect(replay._meta).toEqual({ 'idempotent-replay': true });
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
    expectToolProblem(
      await tool(runtime, world.a.principal, 'create_project', { ...project('Changed'), idempotency_key: key }),
      'IDEMPOTENCY_KEY_REUSED',
    );
    expectRestProblem(await rest(runtime, createProjectCall(key)), 'IDEMPOTENCY_KEY_REUSED');
  });

  it(`has exactly one effect when ${RACERS} identical tool calls race`, async () => {
    const key = randomUUID();
    const before = await countProjects(runtime.store, teamId);
    const results = await Promise.all(
      Array.from({ length: RACERS }, () =>
        tool(runtime, world.a.principal, 'create_project', { ...project(), idempotency_key: key }),
      ),
    );
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
    const successes = results.filter((result) => !result.isError);
    expect(successes.filter((result) => result._meta === undefined)).toHaveLength(1);
    for (const result of successes) expect(result.structuredContent).toEqual(successes[0].structuredContent);
    for (const result of results.filter((candidate) => candidate.isError))
      expectToolProblem(result, 'IDEMPOTENCY_KEY_IN_USE');
  });

  it('answers IDEMPOTENCY_KEY_IN_USE to a tool retry while the first call runs', async () => {
    const key = randomUUID();
    const gate = gatedStore(runtime.store, isProjectTransaction);
    const first = tool(withStore(runtime, gate.store), world.a.principal, 'create_project', {
      ...project(),
      idempotency_key: key,
    });
    await gate.reached;
    expectToolProblem(
      await tool(runtime, world.a.principal, 'create_project', { ...project(), idempotency_key: key }),
      'IDEMPOTENCY_KEY_IN_USE',
    );
    gate.release();
    expect((await first).isError).toBeUndefined();
  });

  it('does not store a failed tool call: the same key works once the call succeeds', async () => {
    const key = randomUUID();
    const missing = randomUUID();
    expectToolProblem(
      await tool(runtime, world.a.principal, 'delete_webhook_endpoint', { id: missing, idempotency_key: key }),
      'NOT_FOUND',
    );
    expectToolProblem(
      await tool(runtime, world.a.principal, 'delete_webhook_endpoint', { id: missing, idempotency_key: key }),
      'NOT_FOUND',
    );
    const deleted = await tool(runtime, world.a.principal, 'delete_webhook_endpoint', {
      id: world.a.endpoint.id,
      idempotency_key: randomUUID(),
    });
    expect(deleted.structuredContent).toEqual({ id: world.a.endpoint.id, deleted: true });
  });
});

describe("subscription transitions take their key 'in-transaction'", () => {
  /** An active subscription of team A (a free plan on A's project), created without a key. */
  async function activeSubscription(): Promise<string> {
    const created = (reply: { status: number; text: string; json: Record<string, unknown> }) => {
      expect(reply.status, reply.text).toBe(201);
      return reply.json.id as string;
    };
    const planId = created(
      await rest(runtime, {
        method: 'POST',
        path: `/v1/projects/${world.a.project.id}/plans`,
        token,
        body: { name: 'Free', amount: 0, currency: 'EUR', interval: 'month' },
      }),
    );
    const subscriber = await createSubscriber(runtime, world.a.principal, world.a.project.id, {
      display_name: 'Ada',
      consent: false,
    });
    return created(
      await rest(runtime, {
        method: 'POST',
        path: `/v1/projects/${world.a.project.id}/subscriptions`,
        token,
        body: { subscriber_id: subscriber.id, plan_id: planId },
      }),
    );
  }
  const transition = (subscriptionId: string, action: string, key: string | null, body: unknown = {}) => ({
    method: 'POST',
    path: `/v1/subscriptions/${subscriptionId}/${action}`,
    token,
    headers: key ? { 'Idempotency-Key': key } : ({} as Record<string, string>),
    body,
  });
  const eventsOf = async (type: string) =>
    (await teamEvents(runtime.store, teamId)).filter((event) => event.type === type);

  it('replays the first response with Idempotent-Replay: true and emits no second event', async () => {
    const subscriptionId = await activeSubscription();
    const key = randomUUID();
    const first = await rest(runtime, transition(subscriptionId, 'pause', key, { reason: 'holiday' }));
    expect(first.status, first.text).toBe(200);
    expect(first.json.status).toBe('paused');
    expect(first.headers['idempotent-replay']).toBeUndefined();
    const replay = await rest(runtime, transition(subscriptionId, 'pause', key, { reason: 'holiday' }));
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(await eventsOf('subscription.paused')).toHaveLength(1);
    // The tool server shares the mode: its own key on pause_subscription replays too (its fingerprint is the tool's).
    const toolKey = randomUUID();
    const resumed = await tool(runtime, world.a.principal, 'resume_subscription', {
      id: subscriptionId,
      idempotency_key: toolKey,
    });
    expect(resumed.isError).toBeFalsy();
    const toolReplay = await tool(runtime, world.a.principal, 'resume_subscription', {
      id: subscriptionId,
      idempotency_key: toolKey,
    });
    expect(toolReplay._meta).toEqual({ 'idempotent-replay': true });
    expect(toolReplay.structuredContent).toEqual(resumed.structuredContent);
    expect(await eventsOf('subscription.resumed')).toHaveLength(1);
  });

  it('answers IDEMPOTENCY_KEY_REUSED for the same key with another body, whether or not the transition would still be allowed', async () => {
    const subscriptionId = await activeSubscription();
    const key = randomUUID();
    expect((await rest(runtime, transition(subscriptionId, 'pause', key, { reason: 'holiday' }))).status).toBe(200);
    const snapshot = await domainSnapshot(runtime.store);
    // Paused again is not allowed (its CONFLICT is answered by the record), resume is (its transaction fails on the
    // record).
    expectRestProblem(
      await rest(runtime, transition(subscriptionId, 'pause', key, { reason: 'other' })),
      'IDEMPOTENCY_KEY_REUSED',
    );
    expectRestProblem(await rest(runtime, transition(subscriptionId, 'resume', key)), 'IDEMPOTENCY_KEY_REUSED');
    expectRestProblem(await rest(runtime, createProjectCall(key)), 'IDEMPOTENCY_KEY_REUSED');
    expect(await domainSnapshot(runtime.store)).toEqual(snapshot);
    expect(await eventsOf('subscription.resumed')).toHaveLength(0);
  });

  it(`has exactly one effect when ${RACERS} identical pauses race, and every answer is the same 200 (no IDEMPOTENCY_KEY_IN_USE)`, async () => {
    const subscriptionId = await activeSubscription();
    const key = randomUUID();
    const replies = await Promise.all(
      Array.from({ length: RACERS }, () => rest(runtime, transition(subscriptionId, 'pause', key, { reason: 'race' }))),
    );
    expect(await eventsOf('subscription.paused')).toHaveLength(1);
    for (const reply of replies) {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.text).toBe(replies[0].text);
    }
    expect(replies.filter((reply) => reply.headers['idempotent-replay'] === undefined)).toHaveLength(1);
  });

  it('answers IDEMPOTENCY_KEY_IN_USE when the key is claimed by a request still running', async () => {
    const subscriptionId = await activeSubscription();
    const key = randomUUID();
    const body = JSON.stringify({});
    await beginIdempotentRequest(
      runtime.store,
      clock,
      teamId,
      key,
      requestFingerprint([world.a.principal.tokenId, 'POST', `/v1/subscriptions/${subscriptionId}/pause`, '', body]),
    );
    const reply = await rest(runtime, {
      ...transition(subscriptionId, 'pause', key),
      body,
      headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json' },
    });
    expectRestProblem(reply, 'IDEMPOTENCY_KEY_IN_USE');
    expect(reply.headers['retry-after']).toBe('1');
    expect(await eventsOf('subscription.paused')).toHaveLength(0);
  });

  it('does not store a failed transition (CONFLICT): the same key runs once the state allows it', async () => {
    const subscriptionId = await activeSubscription();
    const key = randomUUID();
    expectRestProblem(await rest(runtime, transition(subscriptionId, 'resume', key)), 'CONFLICT');
    expectRestProblem(await rest(runtime, transition(subscriptionId, 'resume', key)), 'CONFLICT');
    expect(
      (await scanTable(runtime.store)).filter(
        (item) => item.entity === 'idempotency' && item.pk === keys.teamPartition(teamId),
      ),
    ).toEqual([]);
    // Fixing it, without a key
    expect((await rest(runtime, transition(subscriptionId, 'pause', null))).status).toBe(200);
    const resumed = await rest(runtime, transition(subscriptionId, 'resume', key));
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.headers['idempotent-replay']).toBeUndefined();
    expect(resumed.json.status).toBe('active');
    expect(await eventsOf('subscription.resumed')).toHaveLength(1);
    expect((await rest(runtime, transition(subscriptionId, 'resume', key))).headers['idempotent-replay']).toBe('true');
  });
});
