/**
 * Access-code redemption (DESIGN D15, D18) over REST against DynamoDB Local: a code
 * (case-insensitive, dashes optional) redeemed for an existing subscriber or a new one creates the
 * subscription through the subscriptions module (free_access → active with `ends_at`; trial → trialing
 * with `trial_ends_at`; source `access_code`; `subscription.created` carries the code), counts the use,
 * emits `access_code.redeemed`, and on the last use makes the code `exhausted` with `access_code.expired`
 * — all in one transaction; one redemption per subscriber and code; revoked, expired and exhausted codes
 * are CONFLICT naming the status, unknown codes (and other projects' codes) NOT_FOUND; 5 concurrent
 * redemptions of a code with max_redemptions 2 give exactly 2 subscriptions. Also the subscriber
 * list's `plan_id` filter, kept by the subscriptions' transactions. Every event is read from the outbox
 * and checked against its published schema.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DAY_MS, isoTime } from '../../shared/clock.js';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { addInterval } from '../../shared/domain/subscriptions/lifecycle.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { seedTeam, seedToken } from '../support/store.js';
import {
  call,
  clock,
  codeOf,
  generate,
  gold,
  newEvents,
  newSubscriber,
  ok,
  projectId,
  readCode,
  redeem,
  redeemOk,
  redeemPath,
  runtime,
  team,
  useAccessCodeRedemptionFixture,
} from '../support/fixtures/access-code-redemption.js';

useAccessCodeRedemptionFixture();

const types = (events: EventEnvelope[]) => events.map((event) => event.type);

describe('redeeming', () => {
  it('redeems a free_access code (any case, without dashes) for an existing subscriber: active until now + access_days, in one transaction with its events', async () => {
    const subscriberId = await newSubscriber();
    const code = await codeOf({ max_redemptions: 3 });
    await newEvents();
    const presented = code.code.toLowerCase().replaceAll('-', '');
    const redemption = await redeemOk({ code: presented, subscriber_id: subscriberId });
    const now = clock.nowMs();
    expect(redemption.subscription).toMatchObject({
      project_id: projectId,
      subscriber_id: subscriberId,
      plan_id: gold.id,
      status: 'active',
      has_access: true,
      source: 'access_code',
      payment_provider: null,
      starts_at: isoTime(now),
      ends_at: isoTime(now + 30 * DAY_MS),
      trial_ends_at: null,
      current_period_start: isoTime(now),
      current_period_end: isoTime(Math.min(addInterval(now, 'month', 1), now + 30 * DAY_MS)),
    });
    expect(redemption.access_code).toMatchObject({
      id: code.id,
      times_redeemed: 1,
      max_redemptions: 3,
      status: 'active',
    });
    expect(redemption.subscriber.id).toBe(subscriberId);
    expect(await readCode(code.id)).toMatchObject({ times_redeemed: 1, status: 'active' });
    expect(await ok('GET', `/v1/subscriptions/${redemption.subscription.id}`)).toEqual(redemption.subscription);

    const events = await newEvents();
    expect(types(events)).toEqual(['subscription.created', 'member.converted', 'access_code.redeemed']);
    const created = events[0].data as {
      subscription: { id: string };
      access_code: { id: string; times_redeemed: number } | null;
    };
    expect(created.subscription.id).toBe(redemption.subscription.id);
    expect(created.access_code).toMatchObject({ id: code.id, times_redeemed: 1 });
    expect(events[2].data).toMatchObject({
      access_code: { id: code.id, times_redeemed: 1, status: 'active' },
      subscriber: { id: subscriberId },
      subscription: { id: redemption.subscription.id },
    });
    expect(JSON.stringify(events)).not.toContain(code.code);
  });

  it('gives one plan period when access_days is null, and a trial code starts trialing until now + access_days', async () => {
    const now = clock.nowMs();
    const period = await codeOf({ access_days: null });
    const first = await redeemOk({ code: period.code, subscriber_id: await newSubscriber() });
    expect(first.subscription).toMatchObject({
      status: 'active',
      ends_at: isoTime(addInterval(now, 'month', 1)),
      current_period_end: isoTime(addInterval(now, 'month', 1)),
    });

    const trial = await codeOf({ effect: 'trial', access_days: 14 });
    const second = await redeemOk({ code: trial.code, subscriber_id: await newSubscriber('Bo') });
    expect(second.subscription).toMatchObject({
      status: 'trialing',
      has_access: true,
      source: 'access_code',
      trial_ends_at: isoTime(now + 14 * DAY_MS),
      ends_at: null,
      current_period_end: isoTime(now + 14 * DAY_MS),
    });
    expect(second.access_code).toMatchObject({ effect: 'trial', status: 'exhausted', times_redeemed: 1 });
  });

  it('creates a new subscriber with the redemption (the subscribers module’s fields), showing contact data only to holders of project-user:view', async () => {
    const code = await codeOf({ max_redemptions: 5 });
    await newEvents();
    const redemption = await redeemOk({
      code: code.code,
      subscriber: { display_name: 'Cy', email: 'cy@example.com', consent: true },
    });
    expect(redemption.subscriber).toMatchObject({
      project_id: projectId,
      display_name: 'Cy',
      email: 'cy@example.com',
      consent: true,
      status: 'active',
    });
    expect(redemption.subscription.subscriber_id).toBe(redemption.subscriber.id);
    expect(await ok('GET', `/v1/subscribers/${redemption.subscriber.id}`)).toMatchObject({
      id: redemption.subscriber.id,
      email: 'cy@example.com',
    });
    expect(types(await newEvents())).toEqual(['subscription.created', 'member.converted', 'access_code.redeemed']);

    const limited = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-subscription:create', 'project-user:update'],
    });
    const second = await redeem(
      { code: code.code, subscriber: { display_name: 'Di', email: 'di@example.com', consent: true } },
      limited.token,
    );
    expect(second.status, second.text).toBe(201);
    expect(second.json.subscriber).not.toHaveProperty('email');

    // Creating a subscriber needs what createSubscriber needs; an existing one does not.
    const redeemOnly = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-subscription:create'],
    });
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(
      await redeem({ code: code.code, subscriber: { display_name: 'Ed' } }, redeemOnly.token),
      'TOKEN_MISSING_ABILITY',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(
      (await redeem({ code: code.code, subscriber_id: await newSubscriber('Fay') }, redeemOnly.token)).status,
    ).toBe(201);
    expectRestProblem(
      await redeem(
        { code: code.code, subscriber_id: randomUUID() },
        (await seedToken(runtime.store, clock, { teamId: team.team.id, abilities: ['project-access-code:view'] }))
          .token,
      ),
      'TOKEN_MISSING_ABILITY',
    );
  });

  it('links a new subscriber to the member who already joined with the same platform user id, granting that member access', async () => {
    const resource = await ok(
      'POST',
      `/v1/projects/${projectId}/resources`,
      { kind: 'page', platform_resource_id: 'members-area' },
      201,
    );
    const member = await recordPlatformMembership(runtime, {
      teamId: team.team.id,
      projectId,
      platformUserId: 'web-gus',
      change: 'joined',
      username: 'gus',
    });
    const code = await codeOf({ max_redemptions: 5 });
    await newEvents();
    const redemption = await redeemOk({
      code: code.code,
      subscriber: { display_name: 'Gus', platform_user_id: 'web-gus' },
    });
    expect(redemption.subscriber).toMatchObject({ member_id: member!.id, platform_user_id: 'web-gus' });
    const events = await newEvents();
    expect(types(events).sort()).toEqual([
      'access_code.redeemed',
      'member.access_granted',
      'member.converted',
      'member.updated',
      'subscription.created',
    ]);
    const granted = events.find((event) => event.type === 'member.access_granted')!;
    expect(granted.data).toMatchObject({
      member: { id: member!.id, subscriber_id: redemption.subscriber.id },
      subscriber: { id: redemption.subscriber.id },
      resource: { id: resource.id },
    });
    expect(await ok('GET', `/v1/members/${member!.id}`)).toMatchObject({ subscriber_id: redemption.subscriber.id });
  });

  it('takes the last use: exhausted, access_code.expired in the same transaction, and CONFLICT naming exhausted afterwards', async () => {
    const code = await codeOf({ max_redemptions: 2 });
    await redeemOk({ code: code.code, subscriber_id: await newSubscriber('A') });
    await newEvents();
    const last = await redeemOk({ code: code.code, subscriber_id: await newSubscriber('B') });
    expect(last.access_code).toMatchObject({ times_redeemed: 2, status: 'exhausted' });
    const events = await newEvents();
    expect(types(events)).toEqual([
      'subscription.created',
      'member.converted',
      'access_code.redeemed',
      'access_code.expired',
    ]);
    expect(events.at(-1)!.data).toMatchObject({ access_code: { id: code.id, status: 'exhausted', times_redeemed: 2 } });
    expect(await readCode(code.id)).toMatchObject({ times_redeemed: 2, status: 'exhausted' });

    const late = await newSubscriber('C');
    const before = await domainSnapshot(runtime.store);
    const refused = expectRestProblem(await redeem({ code: code.code, subscriber_id: late }), 'CONFLICT');
    expect(refused.detail).toContain('exhausted');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('allows one redemption per subscriber and code (CONFLICT), counting nothing twice', async () => {
    const code = await codeOf({ max_redemptions: null });
    const subscriberId = await newSubscriber();
    await redeemOk({ code: code.code, subscriber_id: subscriberId });
    const again = expectRestProblem(await redeem({ code: code.code, subscriber_id: subscriberId }), 'CONFLICT');
    expect(again.detail).toContain('already redeemed');
    expect(await readCode(code.id)).toMatchObject({ times_redeemed: 1, max_redemptions: null, status: 'active' });
    const subscriptions = await ok('GET', `/v1/projects/${projectId}/subscriptions`);
    expect(subscriptions.data).toHaveLength(1);
  });

  it('refuses revoked and expired codes with CONFLICT naming the status, writing nothing', async () => {
    const subscriberId = await newSubscriber();
    const revoked = await codeOf();
    await ok('POST', `/v1/access-codes/${revoked.id}/revoke`);
    const expiring = await codeOf({ expires_at: isoTime(clock.nowMs() + DAY_MS) });
    clock.advance(DAY_MS + 1000);
    const before = await domainSnapshot(runtime.store);
    expect(
      expectRestProblem(await redeem({ code: revoked.code, subscriber_id: subscriberId }), 'CONFLICT').detail,
    ).toContain('revoked');
    expect(
      expectRestProblem(await redeem({ code: expiring.code, subscriber_id: subscriberId }), 'CONFLICT').detail,
    ).toContain('expired');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('answers NOT_FOUND for unknown codes, codes of another project or team, and subscribers of another project, without revealing them', async () => {
    const subscriberId = await newSubscriber();
    const otherProject = (await ok('POST', '/v1/projects', { name: 'Other', platform_type: 'web' }, 201)).id;
    const otherPlan = await ok(
      'POST',
      `/v1/projects/${otherProject}/plans`,
      { name: 'Other plan', amount: 100, currency: 'EUR', interval: 'month' },
      201,
    );
    const otherCode = (await generate({}, otherProject, otherPlan.id)).codes[0];
    const otherSubscriber = (
      await ok('POST', `/v1/projects/${otherProject}/subscribers`, { display_name: 'Elsewhere' }, 201)
    ).id;
    const mine = await codeOf({ max_redemptions: 5 });
    const before = await domainSnapshot(runtime.store);

    const unknown = expectRestProblem(
      await redeem({ code: 'ZZZZ-ZZZZ-ZZZZ', subscriber_id: subscriberId }),
      'NOT_FOUND',
    );
    const foreign = expectRestProblem(await redeem({ code: otherCode.code, subscriber_id: subscriberId }), 'NOT_FOUND');
    expect(foreign.detail).toBe(unknown.detail);
    expect(foreign.detail).not.toContain(otherProject);
    expectRestProblem(await redeem({ code: mine.code, subscriber_id: otherSubscriber }), 'NOT_FOUND');
    expectRestProblem(await redeem({ code: mine.code, subscriber_id: randomUUID() }), 'NOT_FOUND');
    expectRestProblem(
      await call('POST', redeemPath(randomUUID()), { code: mine.code, subscriber_id: subscriberId }),
      'NOT_FOUND',
    );

    const stranger = await seedTeam(runtime.store, clock);
    const theirProject = (
      await rest(runtime, {
        method: 'POST',
        path: '/v1/projects',
        token: stranger.token,
        body: { name: 'Theirs', platform_type: 'web' },
      })
    ).json.id;
    const theirSubscriber = (
      await rest(runtime, {
        method: 'POST',
        path: `/v1/projects/${theirProject}/subscribers`,
        token: stranger.token,
        body: { display_name: 'Them' },
      })
    ).json.id;
    const crossTeam = await rest(runtime, {
      method: 'POST',
      path: redeemPath(theirProject),
      token: stranger.token,
      body: { code: mine.code, subscriber_id: theirSubscriber },
    });
    expect(expectRestProblem(crossTeam, 'NOT_FOUND').detail).not.toContain(projectId);
    expect(await domainSnapshot(runtime.store)).toEqual(expect.arrayContaining(before));
    expect(await readCode(mine.id)).toMatchObject({ times_redeemed: 0 });
  });

  it('refuses bad bodies with VALIDATION_FAILED, and an inactive plan or a banned subscriber with CONFLICT', async () => {
    const code = await codeOf({ max_redemptions: 5 });
    const subscriberId = await newSubscriber();
    for (const body of [
      { code: code.code },
      { code: code.code, subscriber_id: subscriberId, subscriber: { display_name: 'Both' } },
      { code: '', subscriber_id: subscriberId },
      { code: code.code, subscriber_id: 'not-a-uuid' },
      { code: code.code, subscriber: { email: 'not-an-address' } },
      { code: code.code, subscriber_id: subscriberId, colour: 'red' },
    ]) {
      expectRestProblem(await redeem(body), 'VALIDATION_FAILED');
    }
    await ok('POST', `/v1/subscribers/${subscriberId}/ban`, {});
    expect(
      expectRestProblem(await redeem({ code: code.code, subscriber_id: subscriberId }), 'CONFLICT').detail,
    ).toContain('banned');
    await ok('POST', `/v1/plans/${gold.id}/deactivate`);
    expect(
      expectRestProblem(await redeem({ code: code.code, subscriber_id: await newSubscriber('Late') }), 'CONFLICT')
        .detail,
    ).toContain('inactive');
    expect(await readCode(code.id)).toMatchObject({ times_redeemed: 0 });
  });

  it('replays a redemption retried with the same Idempotency-Key instead of redeeming twice', async () => {
    const code = await codeOf({ max_redemptions: 5 });
    const key = randomUUID();
    const body = { code: code.code, subscriber: { display_name: 'Once' } };
    const first = await redeem(body, team.token, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(201);
    const replay = await redeem(body, team.token, { 'Idempotency-Key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.json).toEqual(first.json);
    expect(await readCode(code.id)).toMatchObject({ times_redeemed: 1 });
    expect((await ok('GET', `/v1/projects/${projectId}/subscribers`)).data).toHaveLength(1);
  });
});
