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
import { expectRestProblem } from '../support/guarantees.js';
import {
  call,
  codeOf,
  gold,
  newEvents,
  newSubscriber,
  ok,
  projectId,
  readCode,
  redeem,
  redeemOk,
  team,
  useAccessCodeRedemptionFixture,
} from '../support/fixtures/access-code-redemption.js';

useAccessCodeRedemptionFixture();

/** Every item of a paged list. */
async function listAll(path: string): Promise<{ id: string }[]> {
  const items: { id: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await call('GET', path, undefined, {
      token: team.token,
      query: { limit: '100', ...(cursor ? { cursor } : {}) },
    });
    expect(page.status, page.text).toBe(200);
    items.push(...page.json.data);
    cursor = page.json.next_cursor ?? undefined;
  } while (cursor);
  return items;
}

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
          await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, {
            token: team.token,
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
