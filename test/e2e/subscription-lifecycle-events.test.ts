/**
 * A subscription driven through every transition of D15, and every event of the
 * catalogue arriving signed at ONE receiver subscribed to everything, each validated against its published
 * schema. Against the in-process local service (the same REST pipeline, outbox, fan-out, dispatcher and
 * HTTPS transport as `npm start`) with an injected clock; the deadline worker is run explicitly at the
 * clock's time after each move of the clock, once every delivery of the moment before was made.
 *
 * Everything is done as a creator does it: REST calls with a token (subscriptions, the `manual` payment
 * provider's payments, refunds, access codes, subscribers, projects, plans, team members, roles, groups,
 * billing tier, connecting Stripe), the Telegram hook fed as Telegram would (a loopback fake Bot API answers
 * the service's calls), the Stripe API as a loopback fake the real `stripe` SDK talks to (which refuses one
 * Product update with a 4xx Stripe error, so a plan sync fails: `plan.sync_failed`), and the operator CLI's
 * billing functions (`markInvoicePaymentFailed` / `markInvoicePaid`, what
 * `npm run cli -- billing invoice-failed|invoice-paid` runs).
 *
 * One event reaches the endpoint through a documented route rather than by itself: `team.created` is emitted
 * when the team is created, before it can own an endpoint, so the walk sends that stored event to the
 * endpoint with `POST /v1/events/{id}/resend`. Every event of the catalogue is produced
 * ({@link NOT_PRODUCIBLE_YET} is empty).
 *
 * The transitions: the walk knows each subscription's status before each trigger, checks the move against
 * {@link TRANSITION_TABLE} (status, `previous_status`) and records the (status, trigger) pair; at the end
 * every pair of every row of the table must have been exercised, and each must have arrived as its event
 * (the subscription's id, `previous_status` and `status`). A row added to the table fails this test until
 * the walk drives it.
 *
 * Every delivery: `SVC-Signature` checked by the receiver's independent check (test/support/signature.ts)
 * at the receiver's clock (the service's injected one), `SVC-Event-Id` / `SVC-Event-Name` equal to the
 * envelope, the envelope's `data` valid against the schema the running service publishes at
 * `GET /webhook-events.json` and the whole envelope against its `openapi.json` `webhooks` entry (ajv).
 * No payload carries the endpoint secret, a bot token, an invitation token or an access code.
 */

import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { WEBHOOK_EVENT_NAMES } from '../../shared/catalogues/webhook-events.js';
import { DAY_MS, HOUR_MS, isoTime, MINUTE_MS } from '../../shared/clock.js';
import { markInvoicePaid, markInvoicePaymentFailed } from '../../shared/domain/billing/changes.js';
import { GRACE_PERIOD_MS } from '../../shared/domain/billing/schema.js';
import { TRANSITION_TABLE } from '../../shared/domain/subscriptions/state-machine.js';
import { expectPublishedEvent } from '../support/events.js';
import { acceptInvitation } from '../support/local-service.js';
import { checkSignature } from '../support/signature.js';
import {
  BOT,
  CHAT_ID,
  NOT_PRODUCIBLE_YET,
  api,
  chatMember,
  clock,
  exercised,
  expectedTransitionEvents,
  fire,
  fireOne,
  lastKnownStatus,
  openApiWebhooks,
  pairOf,
  published,
  receiver,
  runDeadlinesAt,
  service,
  settle,
  stripe,
  subscriptionOf,
  team,
  telegram,
  telegramUpdate,
  telegramUser,
  useSubscriptionLifecycleFixture,
} from '../support/fixtures/subscription-lifecycle.js';

useSubscriptionLifecycleFixture();

describe('every D15 transition and every event at one receiver', () => {
  it('drives subscriptions through every (status, trigger) pair of the table and receives every producible event, signed and as published', async () => {
    const teamId = team.team.id;

    // ---- The endpoint: every event of the catalogue, to the loopback receiver. --------------------
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      name: 'everything',
      url: receiver.url,
      events: [...WEBHOOK_EVENT_NAMES],
      max_concurrency: 20,
    });
    const secret: string = endpoint.secret;
    await api('POST', `/v1/webhook-endpoints/${endpoint.id}/test`);
    // team.created was emitted before the team could have an endpoint: the events API sends it again to this one.
    const [teamCreated] = (await api('GET', '/v1/events?type=team.created')).data;
    expect(teamCreated.data.team.id).toBe(teamId);
    await api('POST', `/v1/events/${teamCreated.id}/resend`, { endpoint_id: endpoint.id });

    // ---- Projects on the free tier: the fourth is over the limit. ---------------------------------
    const main = await api('POST', '/v1/projects', { name: 'Readers', platform_type: 'telegram' });
    const scratch = await api('POST', '/v1/projects', { name: 'Scratch', platform_type: 'telegram' });
    const extra = await api('POST', '/v1/projects', { name: 'Extra', platform_type: 'web' });
    const overLimit = await api('POST', '/v1/projects', { name: 'One too many', platform_type: 'web' }, [402]);
    expect(overLimit.code).toBe('TIER_LIMIT_REACHED');

    // ---- Billing: pro (its first invoice), a failed payment, the grace period, lockdown, paid. -----
    await api('POST', '/v1/billing/tier', { tier: 'pro' });
    const [invoice] = (await api('GET', '/v1/billing/invoices')).data;
    await markInvoicePaymentFailed(service.runtime, teamId, invoice.id, 'card_declined');
    await runDeadlinesAt(clock.nowMs() + GRACE_PERIOD_MS + MINUTE_MS);
    expect((await api('POST', `/v1/projects/${extra.id}`, { description: 'locked' }, [402])).code).toBe(
      'BILLING_LOCKED',
    );
    await markInvoicePaid(service.runtime, teamId, invoice.id);
    expect((await api('GET', '/v1/billing')).status).toBe('ok');

    // ---- Team members, roles and groups. --------------------------------------------------------
    const role = await api('POST', '/v1/roles', {
      name: 'Moderators',
      abilities: ['project:view', 'project-user:view-any'],
    });
    await api('POST', `/v1/roles/${role.id}`, { description: 'Keep the peace' });
    const group = await api('POST', '/v1/groups', { name: 'Night shift' });
    await api('POST', `/v1/groups/${group.id}`, { description: 'Evenings' });
    const invitation = await api('POST', '/v1/team-members/invitations', {
      email: 'mo@example.com',
      name: 'Mo',
      role_ids: [role.id],
    });
    const accepted = await acceptInvitation(service, invitation.invitation_token);
    expect(accepted.status).toBe(200);
    const teamMemberId = accepted.body.team_member.id;
    await api('POST', `/v1/team-members/${teamMemberId}`, { role_ids: [], group_ids: [group.id] });
    await api('DELETE', `/v1/team-members/${teamMemberId}`);
    await api('DELETE', `/v1/groups/${group.id}`);
    await api('DELETE', `/v1/roles/${role.id}`);

    // ---- The scratch project: bot, resource, Stripe, plan changes and syncs, archive. ---------------
    const scratchBotToken = `${BOT.id + 1}:${'s'.repeat(35)}`;
    telegram.addBot(scratchBotToken, { id: BOT.id + 1, username: 'scratch_bot' });
    await api('PUT', `/v1/projects/${scratch.id}/bot`, { token: scratchBotToken });
    const scratchResource = await api('POST', `/v1/projects/${scratch.id}/resources`, {
      kind: 'channel',
      platform_resource_id: '-1007000000002',
      name: 'News',
    });
    await api('DELETE', `/v1/projects/${scratch.id}/resources/${scratchResource.id}`);
    await api('DELETE', `/v1/projects/${scratch.id}/bot`);
    // Stripe (the loopback fake) accepts this key; each plan change then syncs to it (plan.synced).
    const stripeSecretKey = `rk_test_${randomBytes(18).toString('hex')}`;
    const stripeWebhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
    stripe.addKey(stripeSecretKey, 'acct_lifecycle');
    const connected = await api('PUT', `/v1/projects/${scratch.id}/payment-provider`, {
      provider: 'stripe',
      secret_key: stripeSecretKey,
      webhook_secret: stripeWebhookSecret,
    });
    expect(connected.payment_provider).toMatchObject({ provider: 'stripe' });
    const scratchPlan = await api('POST', `/v1/projects/${scratch.id}/plans`, {
      name: 'Bronze',
      amount: 100,
      currency: 'EUR',
      interval: 'month',
    });
    expect(scratchPlan).toMatchObject({ payment_provider: 'stripe', sync_status: 'synced' });
    expect(stripe.products.get(scratchPlan.provider_product_id)).toMatchObject({
      name: 'Bronze',
      metadata: { plan_id: scratchPlan.id },
    });
    await api('POST', `/v1/plans/${scratchPlan.id}`, { name: 'Bronze readers' });
    await api('POST', `/v1/plans/${scratchPlan.id}/deactivate`);
    await api('POST', `/v1/plans/${scratchPlan.id}/activate`);
    // Stripe refuses the next update of the plan's Product (a 4xx, not retried): the sync is recorded as failed
    // (plan.sync_failed, with Stripe's code); the next sync succeeds.
    stripe.failNext(
      {
        status: 400,
        error: {
          type: 'invalid_request_error',
          code: 'parameter_invalid_empty',
          message: "You passed an empty string for 'name'.",
        },
      },
      { method: 'POST', pathPrefix: `/v1/products/${scratchPlan.provider_product_id}` },
    );
    const failedSync = await api('POST', `/v1/plans/${scratchPlan.id}/sync`);
    expect(failedSync).toMatchObject({
      sync_status: 'failed',
      sync_error: expect.stringContaining('parameter_invalid_empty'),
    });
    expect(await api('POST', `/v1/plans/${scratchPlan.id}/sync`)).toMatchObject({
      sync_status: 'synced',
      sync_error: null,
      provider_product_id: scratchPlan.provider_product_id,
    });
    await api('DELETE', `/v1/projects/${scratch.id}/payment-provider`);
    await api('POST', `/v1/projects/${scratch.id}`, { description: 'For trying things' });
    await api('POST', `/v1/projects/${scratch.id}/archive`);
    await api('POST', `/v1/projects/${scratch.id}/unarchive`);
    await api('DELETE', `/v1/projects/${extra.id}`);

    // ---- The main project: a Telegram bot with rights in a linked chat, the manual provider, plans. --
    const botToken = `${BOT.id}:${'m'.repeat(35)}`;
    telegram.addBot(botToken, BOT);
    await api('PUT', `/v1/projects/${main.id}/bot`, { token: botToken });
    const hookSecret = telegram
      .callsOf('setWebhook')
      .filter((call) => call.token === botToken)
      .at(-1)!.payload.secret_token as string;
    const bot = { ...telegramUser(BOT.id, BOT.username), is_bot: true };
    await telegramUpdate(main.id, hookSecret, {
      my_chat_member: {
        chat: { id: CHAT_ID, type: 'supergroup' },
        from: telegramUser(1),
        date: Math.floor(clock.nowMs() / 1000),
        old_chat_member: { status: 'member', user: bot },
        new_chat_member: { status: 'administrator', user: bot, can_invite_users: true, can_restrict_members: true },
      },
    });
    await api('POST', `/v1/projects/${main.id}/resources`, {
      kind: 'group',
      platform_resource_id: String(CHAT_ID),
      name: 'Readers',
    });
    await api('PUT', `/v1/projects/${main.id}/payment-provider`, { provider: 'manual' });
    const gold = await api('POST', `/v1/projects/${main.id}/plans`, {
      name: 'Gold',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
      trial_days: 7,
      // Longer than the trial, so the failed renewals become unpaid in a run of their own after it ends.
      grace_days: 14,
    });
    const platinum = await api('POST', `/v1/projects/${main.id}/plans`, {
      name: 'Platinum',
      amount: 1500,
      currency: 'EUR',
      interval: 'month',
    });
    let subscriberCount = 0;
    const newSubscriber = async (fields: Record<string, unknown> = {}) =>
      (
        await api('POST', `/v1/projects/${main.id}/subscribers`, {
          display_name: `Reader ${++subscriberCount}`,
          ...fields,
        })
      ).id as string;
    const grant = async (body: Record<string, unknown> = {}) => {
      const created = await api('POST', `/v1/projects/${main.id}/subscriptions`, {
        subscriber_id: await newSubscriber(),
        plan_id: gold.id,
        ...body,
      });
      lastKnownStatus.set(created.id, created.status);
      return created.id as string;
    };
    const firstPayment = async (status: 'pending' | 'failed') =>
      (
        await api('POST', `/v1/projects/${main.id}/payments`, {
          subscriber_id: await newSubscriber(),
          plan_id: gold.id,
          status,
        })
      ).subscription_id as string;
    const pay = (id: string, status: 'succeeded' | 'failed') =>
      api('POST', `/v1/projects/${main.id}/payments`, { subscription_id: id, status });
    const path = (id: string, action: string) => `/v1/subscriptions/${id}/${action}`;

    // ---- Members through the hook and the moderation operations. ---------------------------------
    const grace = await newSubscriber({
      display_name: 'Grace',
      email: 'grace@example.com',
      consent: true,
      platform_user_id: '88',
    });
    await telegramUpdate(main.id, hookSecret, chatMember(88, 'left', 'member'));
    await telegramUpdate(main.id, hookSecret, chatMember(88, 'member', 'member', { username: 'grace_h' }));
    await api('POST', `/v1/subscribers/${grace}/ban`, { reason: 'spam' });
    await api('POST', `/v1/subscribers/${grace}/unban`, {});
    await telegramUpdate(main.id, hookSecret, chatMember(88, 'left', 'member'));
    await api('POST', `/v1/subscribers/${grace}/kick`, {});
    await telegramUpdate(main.id, hookSecret, chatMember(90, 'left', 'member'));
    await telegramUpdate(main.id, hookSecret, chatMember(90, 'member', 'left'));

    // ---- Operation- and payment-driven transitions (the clock stands still). ---------------------
    // Active: renewal payment, plan changes, pause / resume, suspend / unsuspend, cancellation scheduled, then
    // from pending_cancellation: plan changes and suspension; from suspended: cancel.
    const a = await grant();
    await fire([[a, 'payment_succeeded']], () => pay(a, 'succeeded'));
    await fireOne(a, 'upgrade', 'POST', path(a, 'change-plan'), { plan_id: platinum.id });
    await fireOne(a, 'downgrade', 'POST', path(a, 'change-plan'), { plan_id: gold.id });
    await fireOne(a, 'pause', 'POST', path(a, 'pause'), { reason: 'holiday' });
    await fireOne(a, 'resume', 'POST', path(a, 'resume'));
    await fireOne(a, 'suspend', 'POST', path(a, 'suspend'), { reason: 'abuse' });
    await fireOne(a, 'unsuspend', 'POST', path(a, 'unsuspend'));
    await fireOne(a, 'cancel_at_period_end', 'POST', path(a, 'cancel'), { reason: 'moving on' });
    await fireOne(a, 'upgrade', 'POST', path(a, 'change-plan'), { plan_id: platinum.id });
    await fireOne(a, 'downgrade', 'POST', path(a, 'change-plan'), { plan_id: gold.id });
    await fireOne(a, 'suspend', 'POST', path(a, 'suspend'));
    await fireOne(a, 'cancel', 'POST', path(a, 'cancel'), { at_period_end: false });

    // Trialing: plan changes, cancellation scheduled and withdrawn (back to trialing), suspended, unsuspended,
    // canceled.
    const t = await grant({ trial: true });
    await fireOne(t, 'upgrade', 'POST', path(t, 'change-plan'), { plan_id: platinum.id });
    await fireOne(t, 'downgrade', 'POST', path(t, 'change-plan'), { plan_id: gold.id });
    await fireOne(t, 'cancel_at_period_end', 'POST', path(t, 'cancel'), {});
    await fireOne(t, 'resume', 'POST', path(t, 'resume'));
    expect((await subscriptionOf(t)).status).toBe('trialing');
    await fireOne(t, 'suspend', 'POST', path(t, 'suspend'));
    await fireOne(t, 'unsuspend', 'POST', path(t, 'unsuspend'));
    await fireOne(t, 'cancel', 'POST', path(t, 'cancel'), { at_period_end: false });

    // Trialing paid → active; a failed renewal → past_due; plan changes, pause, suspension from paused.
    const p = await grant({ trial: true });
    await fire([[p, 'payment_succeeded']], () => pay(p, 'succeeded'));
    await fire([[p, 'payment_failed']], () => pay(p, 'failed'));
    await fireOne(p, 'upgrade', 'POST', path(p, 'change-plan'), { plan_id: platinum.id });
    await fireOne(p, 'downgrade', 'POST', path(p, 'change-plan'), { plan_id: gold.id });
    await fireOne(p, 'pause', 'POST', path(p, 'pause'));
    await fireOne(p, 'suspend', 'POST', path(p, 'suspend'));

    // Trialing with a failed payment → past_due; recovered → active; failed again; suspended from past_due.
    const r = await grant({ trial: true });
    await fire([[r, 'payment_failed']], () => pay(r, 'failed'));
    await fire([[r, 'payment_succeeded']], () => pay(r, 'succeeded'));
    await fire([[r, 'payment_failed']], () => pay(r, 'failed'));
    await fireOne(r, 'suspend', 'POST', path(r, 'suspend'));

    // First payments through the provider: pending settled succeeded, incomplete recovered; a partial refund,
    // then a refund that also cancels (payment.refunded twice).
    const pending = await firstPayment('pending');
    const [pendingPayment] = (
      await api(
        'GET',
        `/v1/projects/${main.id}/payments?subscriber_id=${(await subscriptionOf(pending)).subscriber_id}`,
      )
    ).data;
    await fire([[pending, 'payment_succeeded']], () =>
      api('POST', `/v1/payments/${pendingPayment.id}`, { status: 'succeeded' }),
    );
    await api('POST', `/v1/payments/${pendingPayment.id}/refund`, { amount: 300, reason: 'Missed a week' });
    await fire([[pending, 'cancel']], () =>
      api('POST', `/v1/payments/${pendingPayment.id}/refund`, { cancel: true, reason: 'Asked for it' }),
    );
    const incomplete = await firstPayment('failed');
    await fire([[incomplete, 'payment_succeeded']], () => pay(incomplete, 'succeeded'));

    // Cancel at once from every other non-terminal status.
    const cancelNow = (id: string) => fireOne(id, 'cancel', 'POST', path(id, 'cancel'), { at_period_end: false });
    await cancelNow(await grant({ trial: true }));
    await cancelNow(await firstPayment('pending'));
    await cancelNow(await firstPayment('failed'));
    await cancelNow(await grant({ starts_at: isoTime(clock.nowMs() + 5 * DAY_MS) }));
    const overdue = await grant();
    await fire([[overdue, 'payment_failed']], () => pay(overdue, 'failed'));
    await cancelNow(overdue);
    const paused = await grant();
    await fireOne(paused, 'pause', 'POST', path(paused, 'pause'));
    await cancelNow(paused);
    const leaving = await grant();
    await fireOne(leaving, 'cancel_at_period_end', 'POST', path(leaving, 'cancel'), { at_period_end: true });
    await cancelNow(leaving);

    // ---- Clock-driven transitions: the deadline worker at each due time. -------------------------
    const start = clock.nowMs();
    const expiringPending = await firstPayment('pending');
    const expiringIncomplete = await firstPayment('failed');
    const scheduled = await grant({ starts_at: isoTime(start + 12 * HOUR_MS) });
    const scheduledTrial = await grant({ starts_at: isoTime(start + 12 * HOUR_MS), trial: true });
    const trial = await grant({ trial: true });
    const renewing = await grant();
    const ending = await grant();
    await fireOne(ending, 'cancel_at_period_end', 'POST', path(ending, 'cancel'), {});
    const overdueIds = [await grant(), await grant(), await grant()];
    for (const id of overdueIds) await fire([[id, 'payment_failed']], () => pay(id, 'failed'));
    const [stillUnpaid, recovered, givenUp] = overdueIds;
    // An access code: one use of two days' free access; its redemption (for a new subscriber) is the code's last use.
    const batch = await api('POST', `/v1/projects/${main.id}/access-codes/batches`, {
      plan_id: gold.id,
      count: 1,
      effect: 'free_access',
      access_days: 2,
      max_redemptions: 1,
    });
    const redeemed = await api('POST', `/v1/projects/${main.id}/access-codes/redeem`, {
      code: batch.codes[0].code,
      subscriber: { display_name: 'Code holder' },
    });
    const fixedTerm = redeemed.subscription.id as string;
    expect(redeemed.subscription.ends_at).toBe(isoTime(start + 2 * DAY_MS));

    // Each run's statuses before are known before the clock moves, so nothing can apply a move before it is checked.
    await fire(
      [
        [expiringPending, 'incomplete_expired'],
        [expiringIncomplete, 'incomplete_expired'],
        [scheduled, 'start_reached'],
        [scheduledTrial, 'start_reached'],
      ],
      () => runDeadlinesAt(start + DAY_MS),
    );
    expect((await subscriptionOf(scheduled)).status).toBe('active');
    expect((await subscriptionOf(scheduledTrial)).status).toBe('trialing');
    await fire([[fixedTerm, 'term_ended']], () => runDeadlinesAt(start + 2 * DAY_MS + MINUTE_MS));
    await fire([[trial, 'trial_ended']], () => runDeadlinesAt(start + 7 * DAY_MS + MINUTE_MS));
    await fire(
      overdueIds.map((id) => [id, 'retries_exhausted']),
      () => runDeadlinesAt(start + 14 * DAY_MS + MINUTE_MS),
    );
    await fire([[recovered, 'payment_succeeded']], () => pay(recovered, 'succeeded'));
    await fireOne(givenUp, 'cancel', 'POST', path(givenUp, 'cancel'), { at_period_end: false });
    const periodEnd = Date.parse((await subscriptionOf(renewing)).current_period_end);
    expect(Date.parse((await subscriptionOf(ending)).current_period_end)).toBe(periodEnd);
    await fire(
      [
        [renewing, 'period_renewed'],
        [ending, 'period_ended'],
      ],
      () => runDeadlinesAt(periodEnd + MINUTE_MS),
    );
    await fire([[stillUnpaid, 'unpaid_limit_reached']], () => runDeadlinesAt(start + 44 * DAY_MS + 5 * MINUTE_MS));

    // ---- Every pair of every row of the table was exercised. ------------------------------------
    const allPairs = TRANSITION_TABLE.flatMap((rule) => rule.from.map((from) => pairOf(from, rule.trigger)));
    expect([...exercised].sort()).toEqual([...new Set(allPairs)].sort());

    // ---- Last, the team itself goes. -------------------------------------------------------------
    await settle();
    await api('DELETE', `/v1/teams/current?confirm_team_id=${teamId}`);

    // ---- What arrived: exactly the catalogue minus what cannot be produced yet. -------------------
    const expectedTypes = WEBHOOK_EVENT_NAMES.filter((name) => !(name in NOT_PRODUCIBLE_YET));
    await vi.waitFor(() => expect([...receiver.types()].sort()).toEqual([...expectedTypes].sort()), {
      timeout: 30_000,
      interval: 100,
    });
    await settle();
    for (const name of Object.keys(NOT_PRODUCIBLE_YET)) expect(WEBHOOK_EVENT_NAMES).toContain(name);

    for (const delivery of receiver.deliveries) {
      const { envelope, headers } = delivery;
      expect(
        checkSignature({
          header: headers['svc-signature'],
          rawBody: delivery.rawBody,
          secret,
          nowSeconds: delivery.receivedAtSeconds,
        }),
        envelope.type,
      ).toBeNull();
      expect(headers['svc-event-id']).toBe(envelope.id);
      expect(headers['svc-event-name']).toBe(envelope.type);
      expectPublishedEvent(envelope, published);
      const validate = openApiWebhooks(envelope.type);
      expect(
        validate(envelope),
        `${envelope.type} against openapi.json webhooks: ${JSON.stringify(validate.errors)}`,
      ).toBe(true);
    }
    // Each transition arrived as its event, naming the subscription, the status it left and the one it reached.
    const transitions = receiver.deliveries
      .map(({ envelope }) => envelope)
      .filter((envelope) => envelope.type.startsWith('subscription.'));
    for (const expected of expectedTransitionEvents) {
      const match = transitions.find(
        (envelope) =>
          envelope.type === expected.type &&
          envelope.data.subscription.id === expected.subscriptionId &&
          envelope.data.subscription.previous_status === expected.from &&
          envelope.data.subscription.status === expected.to,
      );
      expect(match, `${expected.type} ${expected.from} → ${expected.to} of ${expected.subscriptionId}`).toBeDefined();
    }
    // D10: the endpoint's owner holds project-user:view and Grace consented, so her member events carry her e-mail.
    // The plan syncs of the scratch project were Stripe's: one refused with Stripe's code, the others synced.
    const syncFailed = receiver.deliveries.find(({ envelope }) => envelope.type === 'plan.sync_failed')!.envelope;
    expect(syncFailed.data).toMatchObject({
      plan: { id: scratchPlan.id },
      payment_provider: 'stripe',
      code: 'parameter_invalid_empty',
    });
    const stripeSyncs = receiver.deliveries.filter(
      ({ envelope }) => envelope.type === 'plan.synced' && envelope.data.payment_provider === 'stripe',
    );
    expect(stripeSyncs.map(({ envelope }) => envelope.data.plan.id)).toContain(scratchPlan.id);
    const banned = receiver.deliveries.find(({ envelope }) => envelope.type === 'member.banned')!.envelope;
    expect(banned.data.subscriber).toMatchObject({ id: grace, email: 'grace@example.com' });
    // Secrets never travel: no endpoint secret, bot token, Stripe key or signing secret, invitation token or access
    // code in any payload.
    const everything = receiver.deliveries.map((delivery) => delivery.rawBody).join('\n');
    for (const hidden of [
      secret,
      botToken,
      scratchBotToken,
      stripeSecretKey,
      stripeWebhookSecret,
      invitation.invitation_token,
      batch.codes[0].code,
    ])
      expect(everything).not.toContain(hidden);
  }, 300_000); // ~40 s alone; several times that beside the rest of the suite on 2 cores
});
