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
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { isoTime } from '../../shared/clock.js';
import { AccessCodeRedemption, GeneratedAccessCodes } from '../../shared/domain/access-codes/schema.js';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { addInterval } from '../../shared/domain/subscriptions/lifecycle.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { expectPublishedEvent } from '../support/events.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

const DAY = 86_400_000;

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let gold: { id: string };
let seen: number;

/** Every outbox event of the team, oldest first (paged), each checked against its published schema. */
async function allEvents(): Promise<EventEnvelope[]> {
  const events: EventEnvelope[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await runtime.store.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: {
        ':pk': keys.teamPartition(team.team.id),
        ':prefix': keys.event(team.team.id, '').sk,
      },
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    for (const item of page.items) {
      const event = {
        id: item.id,
        type: item.type,
        created_at: item.created_at,
        api_version: item.api_version,
        project_id: item.project_id,
        data: item.data,
      } as EventEnvelope;
      expectPublishedEvent(event);
      events.push(event);
    }
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return events;
}

/** The team's events not returned before (see {@link allEvents}). */
async function newEvents(): Promise<EventEnvelope[]> {
  const events = await allEvents();
  const fresh = events.slice(seen);
  seen = events.length;
  return fresh;
}

const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const call = (
  method: string,
  path: string,
  body?: unknown,
  token = team.token,
  extra: { headers?: Record<string, string>; query?: Record<string, string> } = {},
) => rest(runtime, { method, path, token, body, ...extra });
const ok = async (method: string, path: string, body?: unknown, status = 200) => {
  const reply = await call(method, path, body);
  expect(reply.status, reply.text).toBe(status);
  return reply.json;
};
const redeemPath = (project = projectId) => `/v1/projects/${project}/access-codes/redeem`;
const redeem = (body: Record<string, unknown>, token = team.token, headers?: Record<string, string>) =>
  call('POST', redeemPath(), body, token, { headers });
const redeemOk = async (body: Record<string, unknown>) => {
  const reply = await redeem(body);
  expect(reply.status, reply.text).toBe(201);
  return AccessCodeRedemption.parse(reply.json);
};
const newSubscriber = async (name = 'Ada') =>
  (await ok('POST', `/v1/projects/${projectId}/subscribers`, { display_name: name }, 201)).id as string;

/** Generates codes of `gold` (defaults: one free_access code, 30 days, one use). */
async function generate(
  body: Record<string, unknown> = {},
  project = projectId,
  plan = gold.id,
): Promise<GeneratedAccessCodes> {
  return GeneratedAccessCodes.parse(
    await ok(
      'POST',
      `/v1/projects/${project}/access-codes/batches`,
      { plan_id: plan, count: 1, access_days: 30, ...body },
      201,
    ),
  );
}
/** Every item of a paged list. */
async function listAll(path: string): Promise<{ id: string }[]> {
  const items: { id: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await call('GET', path, undefined, team.token, {
      query: { limit: '100', ...(cursor ? { cursor } : {}) },
    });
    expect(page.status, page.text).toBe(200);
    items.push(...page.json.data);
    cursor = page.json.next_cursor ?? undefined;
  } while (cursor);
  return items;
}
const codeOf = async (body: Record<string, unknown> = {}) => (await generate(body)).codes[0];
const readCode = async (id: string) => ok('GET', `/v1/access-codes/${id}`);

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Book club', platform_type: 'web' }, 201)).id;
  gold = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Gold', amount: 900, currency: 'EUR', interval: 'month', trial_days: 7 },
    201,
  );
  seen = 0;
  await newEvents();
});

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
      ends_at: isoTime(now + 30 * DAY),
      trial_ends_at: null,
      current_period_start: isoTime(now),
      current_period_end: isoTime(Math.min(addInterval(now, 'month', 1), now + 30 * DAY)),
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
      trial_ends_at: isoTime(now + 14 * DAY),
      ends_at: null,
      current_period_end: isoTime(now + 14 * DAY),
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
    const expiring = await codeOf({ expires_at: isoTime(clock.nowMs() + DAY) });
    clock.advance(DAY + 1000);
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

describe('a race for the last uses', () => {
  /** Redemptions against DynamoDB Local on a shared machine (a budget, not a timing assertion). */
  const RACE_TIMEOUT_MS = 240_000;
  // The smallest race that takes both kinds of use (before the last, and the last) and has losers: every racer
  // reads the code before any commits, so a use counted without its condition gives more than USES subscriptions.
  const USES = 2;
  const RACERS = 5;

  it(
    `gives exactly ${USES} subscriptions to ${RACERS} concurrent redemptions of a code with max_redemptions ${USES}; the others get CONFLICT naming exhausted`,
    async () => {
      const code = await codeOf({ max_redemptions: USES });
      await newEvents();
      const replies = await Promise.all(
        Array.from({ length: RACERS }, (_, index) =>
          redeem({ code: code.code, subscriber: { display_name: `Racer ${index}` } }),
        ),
      );
      const won = replies.filter((reply) => reply.status === 201);
      const lost = replies.filter((reply) => reply.status !== 201);
      expect(won).toHaveLength(USES);
      expect(lost).toHaveLength(RACERS - USES);
      for (const reply of lost) expect(expectRestProblem(reply, 'CONFLICT').detail).toContain('exhausted');

      expect(await readCode(code.id)).toMatchObject({ times_redeemed: USES, status: 'exhausted' });
      const subscriptions = await listAll(`/v1/projects/${projectId}/subscriptions`);
      expect(subscriptions).toHaveLength(USES);
      expect(new Set(subscriptions.map((subscription) => subscription.id))).toEqual(
        new Set(won.map((reply) => reply.json.subscription.id)),
      );
      // The losers' subscribers were never written: the subscriber is created in the redemption's transaction.
      const subscribers = await listAll(`/v1/projects/${projectId}/subscribers`);
      expect(new Set(subscribers.map((subscriber) => subscriber.id))).toEqual(
        new Set(won.map((reply) => reply.json.subscriber.id)),
      );

      const events = await newEvents();
      const count = (type: string) => events.filter((event) => event.type === type).length;
      expect(count('subscription.created')).toBe(USES);
      expect(count('access_code.redeemed')).toBe(USES);
      expect(count('access_code.expired')).toBe(1);
      const expired = events.find((event) => event.type === 'access_code.expired')!;
      expect(expired.data).toMatchObject({ access_code: { id: code.id, times_redeemed: USES, status: 'exhausted' } });
    },
    RACE_TIMEOUT_MS,
  );
});

describe('the subscriber list’s plan filter', () => {
  it('lists the subscribers with a live subscription to the plan, through creation, redemption, plan change and cancellation', async () => {
    const silver = await ok(
      'POST',
      `/v1/projects/${projectId}/plans`,
      { name: 'Silver', amount: 300, currency: 'EUR', interval: 'month' },
      201,
    );
    const [ada, bo, cy] = [await newSubscriber('Ada'), await newSubscriber('Bo'), await newSubscriber('Cy')];
    const byPlan = async (planId: string) =>
      (
        (
          await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, team.token, {
            query: { plan_id: planId },
          })
        ).json.data as { id: string }[]
      )
        .map((subscriber) => subscriber.id)
        .sort();
    const grant = async (subscriberId: string, planId: string) =>
      (
        await ok(
          'POST',
          `/v1/projects/${projectId}/subscriptions`,
          { subscriber_id: subscriberId, plan_id: planId },
          201,
        )
      ).id as string;

    const adaGold = await grant(ada, gold.id);
    const adaGoldAgain = await grant(ada, gold.id);
    const boSilver = await grant(bo, silver.id);
    await redeemOk({ code: (await codeOf()).code, subscriber_id: cy });
    expect(await byPlan(gold.id)).toEqual([ada, cy].sort());
    expect(await byPlan(silver.id)).toEqual([bo]);

    // Two live subscriptions to one plan: ending one keeps the subscriber listed; ending both removes them.
    await ok('POST', `/v1/subscriptions/${adaGold}/cancel`, { at_period_end: false });
    expect(await byPlan(gold.id)).toEqual([ada, cy].sort());
    await ok('POST', `/v1/subscriptions/${adaGoldAgain}/cancel`, { at_period_end: false });
    expect(await byPlan(gold.id)).toEqual([cy]);

    // A plan change moves the subscriber from one plan's list to the other's; a pause keeps it (still live).
    await ok('POST', `/v1/subscriptions/${boSilver}/change-plan`, { plan_id: gold.id });
    expect(await byPlan(silver.id)).toEqual([]);
    expect(await byPlan(gold.id)).toEqual([bo, cy].sort());
    await ok('POST', `/v1/subscriptions/${boSilver}/pause`, {});
    expect(await byPlan(gold.id)).toEqual([bo, cy].sort());
    expect(await byPlan(randomUUID())).toEqual([]);
  });
});
