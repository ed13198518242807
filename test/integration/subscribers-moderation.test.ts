/**
 * Subscribers (DESIGN D10, D14, D17, D22): create, read by id alone, list per project
 * (status, plan and e-mail prefix filters, paging, no contact data), update, export (NDJSON pages), and
 * ban / unban / kick through the platform adapter (`web`; failing adapters injected at the use case),
 * with the `member.*` events they emit read from the outbox and checked against their published JSON
 * Schema. Every operation over REST; the four subscriber tools over the tool server. Against DynamoDB
 * Local, with an injected clock.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { banSubscriber, kickSubscriber, unbanSubscriber } from '../../shared/domain/subscribers/moderation.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import { getSubscription } from '../../shared/domain/subscriptions/queries.js';
import type { PlatformAdapter } from '../../shared/platforms/platform-adapter.js';
import { webPlatformAdapter } from '../../shared/platforms/web.js';
import { expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import { seedToken } from '../support/store.js';
import {
  call,
  clock,
  createSubscriberOk,
  joined,
  newEvents,
  projectId,
  runtime,
  team,
  types,
  useSubscribersFixture,
} from '../support/fixtures/subscribers.js';

useSubscribersFixture();

/** An adapter whose every call fails with `reason` (or throws when `reason` is null). */
function failingAdapter(reason: string | null): PlatformAdapter {
  const fail = async () => {
    if (reason === null) throw new Error('socket hang up at internal-host-10.0.0.7');
    return { ok: false as const, reason };
  };
  return {
    platform: 'web',
    grantAccess: fail,
    revokeInviteLink: fail,
    revokeAccess: fail,
    kick: fail,
    ban: fail,
    unban: fail,
  };
}

describe('ban, unban and kick', () => {
  it('bans over ban_subscriber (member.banned), refuses a second ban, unbans over REST (member.unbanned)', async () => {
    const subscriber = await createSubscriberOk();
    clock.advance(1_000);
    const banned = await tool(runtime, team.principal, 'ban_subscriber', { id: subscriber.id, reason: 'spam' });
    expect(banned.isError, JSON.stringify(banned.structuredContent)).toBeFalsy();
    const result = banned.structuredContent as any;
    expect(result.subscriber).toMatchObject({ id: subscriber.id, status: 'banned', banned_at: expect.any(String) });
    // Never joined, but has a platform identity: the member is recorded as banned.
    expect(result.member).toMatchObject({
      platform_user_id: 'web-ada',
      subscriber_id: subscriber.id,
      status: 'banned',
      joined_at: null,
      platform_error: null,
    });
    expect(result.subscriber.member_id).toBe(result.member.id);
    const events = await newEvents();
    expect(types(events)).toEqual(['member.banned']);
    expect(events[0].project_id).toBe(projectId);
    expect(events[0].data).toEqual({ member: result.member, subscriber: result.subscriber, reason: 'spam' });

    expectToolProblem(await tool(runtime, team.principal, 'ban_subscriber', { id: subscriber.id }), 'CONFLICT');
    expectRestProblem(await call('POST', `/v1/subscribers/${subscriber.id}/kick`, {}), 'CONFLICT');

    const unbanned = await call('POST', `/v1/subscribers/${subscriber.id}/unban`);
    expect(unbanned.status, unbanned.text).toBe(200);
    expect(unbanned.json.subscriber).toMatchObject({ status: 'active', banned_at: null });
    expect(unbanned.json.member).toMatchObject({ status: 'left' });
    const after = await newEvents();
    expect(types(after)).toEqual(['member.unbanned']);
    expect(after[0].data).toEqual({ member: unbanned.json.member, subscriber: unbanned.json.subscriber });
    expectRestProblem(await call('POST', `/v1/subscribers/${subscriber.id}/unban`), 'CONFLICT');
  });

  it('bans a subscriber without a platform identity (member null) and replays a retried ban with the same Idempotency-Key', async () => {
    const subscriber = await createSubscriberOk({ display_name: 'Offline', email: 'offline@example.com' });
    const key = randomUUID();
    const first = await call(
      'POST',
      `/v1/subscribers/${subscriber.id}/ban`,
      { reason: 'fraud' },
      { token: team.token, headers: { 'Idempotency-Key': key } },
    );
    const again = await call(
      'POST',
      `/v1/subscribers/${subscriber.id}/ban`,
      { reason: 'fraud' },
      { token: team.token, headers: { 'Idempotency-Key': key } },
    );
    expect(first.status, first.text).toBe(200);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(first.json.member).toBeNull();
    expect(first.json.subscriber).not.toHaveProperty('email');
    const events = await newEvents();
    expect(types(events)).toEqual(['member.banned']);
    expect(events[0].data).toMatchObject({ member: null, reason: 'fraud' });
    expectRestProblem(
      await call('POST', `/v1/subscribers/${subscriber.id}/ban`, { reason: 'x'.repeat(501) }),
      'VALIDATION_FAILED',
    );

    // Unbanning them (no member either) emits member.unbanned with member null — it answered 500 before
    // (found by the property-based run of the OpenAPI document: the payload schema required a member).
    const unbanned = await call('POST', `/v1/subscribers/${subscriber.id}/unban`);
    expect(unbanned.status, unbanned.text).toBe(200);
    expect(unbanned.json).toMatchObject({
      member: null,
      subscriber: { id: subscriber.id, status: 'active', banned_at: null },
    });
    const after = await newEvents();
    expect(types(after)).toEqual(['member.unbanned']);
    expect(after[0].data).toMatchObject({ member: null, subscriber: { id: subscriber.id, status: 'active' } });
  });

  it('kicks a joined member over kick_subscriber (member.kicked); refuses a subscriber who never joined or was already kicked', async () => {
    const subscriber = await createSubscriberOk();
    const lonely = await createSubscriberOk({ display_name: 'Lonely', platform_user_id: 'web-lonely' });
    await joined('web-ada', 'ada');
    await newEvents();
    const kicked = await tool(runtime, team.principal, 'kick_subscriber', { id: subscriber.id, reason: 'rude' });
    expect(kicked.isError, JSON.stringify(kicked.structuredContent)).toBeFalsy();
    const result = kicked.structuredContent as any;
    expect(result.subscriber).toMatchObject({ status: 'active' });
    expect(result.member).toMatchObject({ status: 'kicked', username: 'ada' });
    const events = await newEvents();
    expect(types(events)).toEqual(['member.kicked']);
    expect(events[0].data).toMatchObject({
      reason: 'rude',
      member: { status: 'kicked' },
      subscriber: { id: subscriber.id },
    });
    expectToolProblem(await tool(runtime, team.principal, 'kick_subscriber', { id: subscriber.id }), 'CONFLICT');
    expectToolProblem(await tool(runtime, team.principal, 'kick_subscriber', { id: lonely.id }), 'CONFLICT');
    expectToolProblem(
      await tool(runtime, team.principal, 'kick_subscriber', { id: subscriber.id, unknown: true }),
      'VALIDATION_FAILED',
    );
    // A kicked member may come back.
    expect((await joined('web-ada'))!.status).toBe('joined');
  });

  it('records a failed platform call on the member without rolling back the state change; a later success clears it', async () => {
    const subscriber = await createSubscriberOk();
    await joined('web-ada');
    const banned = await banSubscriber(runtime, team.principal, subscriber.id, null, {
      adapters: { web: failingAdapter('The bot lacks the ban permission.') },
    });
    expect(banned.subscriber.status).toBe('banned');
    expect(banned.member).toMatchObject({
      status: 'banned',
      platform_error: { action: 'ban', message: 'The bot lacks the ban permission.', at: expect.any(String) },
    });
    expect((await call('GET', `/v1/members/${banned.member!.id}`)).json).toEqual(banned.member);

    const unbanned = await unbanSubscriber(runtime, team.principal, subscriber.id, {
      adapters: { web: failingAdapter(null) },
    });
    expect(unbanned.member).toMatchObject({
      status: 'left',
      platform_error: { action: 'unban', message: 'The platform call failed unexpectedly; retry later.' },
    });
    expect(JSON.stringify(unbanned)).not.toContain('internal-host');

    await joined('web-ada');
    const kicked = await kickSubscriber(runtime, team.principal, subscriber.id, null, {
      adapters: { web: webPlatformAdapter() },
    });
    expect(kicked.member).toMatchObject({ status: 'kicked', platform_error: null });
    expect(types(await newEvents())).toEqual([
      'member.joined',
      'member.banned',
      'member.unbanned',
      'member.joined',
      'member.kicked',
    ]);
  });

  it('suspends the banned subscriber’s live subscriptions (subscription.suspended)', async () => {
    const subscriber = await createSubscriberOk();
    const plan = await createPlan(runtime, team.principal, projectId, {
      name: 'Free',
      amount: 0,
      currency: 'EUR',
      interval: 'month',
    });
    const subscription = await createSubscription(runtime, team.principal, projectId, {
      subscriber_id: subscriber.id,
      plan_id: plan.id,
    });
    await newEvents();
    const banned = await call('POST', `/v1/subscribers/${subscriber.id}/ban`, {});
    expect(banned.status, banned.text).toBe(200);
    expect((await getSubscription(runtime.store, team.principal, subscription.id)).status).toBe('suspended');
    expect(types(await newEvents())).toEqual(['member.banned', 'subscription.suspended']);
  });

  it('answers NOT_FOUND for unknown ids and refuses callers without the ability', async () => {
    const subscriber = await createSubscriberOk();
    for (const action of ['ban', 'unban', 'kick'])
      expectRestProblem(await call('POST', `/v1/subscribers/${randomUUID()}/${action}`, {}), 'NOT_FOUND');
    const viewer = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-user:view', 'mcp:full'],
    });
    expectToolProblem(
      await tool(runtime, viewer.principal, 'ban_subscriber', { id: subscriber.id }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await call('POST', `/v1/subscribers/${subscriber.id}/kick`, {}, { token: viewer.token }),
      'TOKEN_MISSING_ABILITY',
    );
  });
});
