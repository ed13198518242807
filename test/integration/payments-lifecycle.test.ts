/**
 * Payments (DESIGN D10, D15, D16), `manual` provider, against DynamoDB Local: recording
 * a payment (for a subscription, or the first payment of a new subscription created pending, incomplete
 * or active), settling a pending one, reading it by id alone (REST and `get_payment`), listing (filters:
 * subscriber, status, provider, date range; cursor paging; `list_payments`), refunds (partial, full,
 * accumulated, `cancel: true`; REST and `refund_payment`), validation errors and CONFLICTs naming the
 * status, and every D15 effect of a payment outcome — each in the payment's own transaction, with its
 * `payment.*` event first and the subscription's event after; where the transition table has no row the
 * payment is recorded and the subscription left unchanged. Every event is read from the outbox and
 * checked against its published JSON Schema.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, isoTime } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import {
  call,
  clock,
  gold,
  grant,
  newEvents,
  newSubscriber,
  ok,
  projectId,
  record,
  runtime,
  settle,
  subscriberId,
  team,
  types,
  usePaymentsFixture,
} from '../support/fixtures/payments.js';

usePaymentsFixture();

const refund = (paymentId: string, body: Record<string, unknown> = {}) =>
  ok('POST', `/v1/payments/${paymentId}/refund`, body);

const subscription = (id: string) => ok('GET', `/v1/subscriptions/${id}`);

/** Runs the deadline worker at the clock's now. */
const tick = () => applyDueDeadlines(runtime, clock.nowMs());

describe('the first payment of a new subscription (D15 "(new)" row)', () => {
  it('a pending payment creates a pending subscription billed through the provider; settling it succeeded activates it', async () => {
    const payment = await record({
      subscriber_id: subscriberId,
      plan_id: gold.id,
      status: 'pending',
      provider_payment_id: 'SEPA-2026-001',
    });
    const now = isoTime(clock.nowMs());
    expect(payment).toEqual({
      id: expect.any(String),
      project_id: projectId,
      subscriber_id: subscriberId,
      subscription_id: expect.any(String),
      amount: 900,
      amount_refunded: 0,
      currency: 'EUR',
      status: 'pending',
      provider: 'manual',
      provider_payment_id: 'SEPA-2026-001',
      billing_reason: 'subscription_create',
      mismatch: null,
      discount: null,
      created_at: now,
      updated_at: now,
    });
    const pending = await subscription(payment.subscription_id);
    expect(pending).toMatchObject({
      status: 'pending',
      has_access: false,
      source: 'provider',
      payment_provider: 'manual',
      plan_id: gold.id,
      current_period_start: null,
      current_period_end: null,
    });
    const created = await newEvents();
    expect(types(created)).toEqual(['payment.pending', 'subscription.created']);
    expect(created[0]).toMatchObject({
      project_id: projectId,
      data: { payment, subscription: pending, subscriber: { id: subscriberId, email: 'ada@example.com' } },
    });
    expect(created[1].data).toMatchObject({ subscription: pending });

    clock.advance(HOUR_MS);
    const settled = await settle(payment.id, 'succeeded');
    expect(settled).toEqual({ ...payment, status: 'succeeded', updated_at: isoTime(clock.nowMs()) });
    const active = await subscription(payment.subscription_id);
    expect(active).toMatchObject({
      status: 'active',
      previous_status: 'pending',
      has_access: true,
      current_period_start: isoTime(clock.nowMs()),
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.succeeded', 'subscription.activated', 'member.converted']);
    expect(events[0].data).toMatchObject({ payment: settled, subscription: active });
    expect(events[1].data).toMatchObject({ subscription: active });
    expect(await ok('GET', `/v1/payments/${payment.id}`)).toEqual(settled);
  });

  it('a failed payment creates an incomplete subscription; another failure leaves it incomplete (no row); a succeeded one activates it', async () => {
    const failed = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'failed', amount: 1200 });
    expect(failed).toMatchObject({ status: 'failed', amount: 1200, billing_reason: 'subscription_create' });
    expect(await subscription(failed.subscription_id)).toMatchObject({
      status: 'incomplete',
      has_access: false,
      source: 'provider',
    });
    expect(types(await newEvents())).toEqual(['payment.failed', 'subscription.created']);

    const again = await record({ subscription_id: failed.subscription_id, status: 'failed' });
    expect(again).toMatchObject({
      status: 'failed',
      billing_reason: 'subscription_create',
      subscription_id: failed.subscription_id,
    });
    const unchanged = await subscription(failed.subscription_id);
    expect(unchanged).toMatchObject({ status: 'incomplete', previous_status: null });
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.failed']);
    expect(events[0].data).toMatchObject({ payment: again, subscription: unchanged });

    const paid = await record({ subscription_id: failed.subscription_id, status: 'succeeded' });
    expect(paid).toMatchObject({ status: 'succeeded', billing_reason: 'subscription_create', amount: 900 });
    expect(await subscription(failed.subscription_id)).toMatchObject({
      status: 'active',
      previous_status: 'incomplete',
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated', 'member.converted']);
  });

  it('a succeeded payment creates an active subscription with its first period', async () => {
    const payment = await record({
      subscriber_id: subscriberId,
      plan_id: gold.id,
      status: 'succeeded',
      currency: 'EUR',
    });
    const active = await subscription(payment.subscription_id);
    expect(active).toMatchObject({
      status: 'active',
      has_access: true,
      source: 'provider',
      payment_provider: 'manual',
      current_period_start: isoTime(clock.nowMs()),
    });
    expect(Date.parse(active.current_period_end)).toBeGreaterThan(clock.nowMs() + 27 * DAY_MS);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.created', 'member.converted']);
  });

  it('a pending first payment that never completes: the clock expires the subscription after 23 hours; settling it later records the payment and leaves the subscription', async () => {
    const payment = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'pending' });
    await newEvents();
    clock.advance(24 * HOUR_MS);
    await tick();
    expect(await subscription(payment.subscription_id)).toMatchObject({ status: 'incomplete_expired' });
    expect(types(await newEvents())).toEqual(['subscription.incomplete_expired']);
    const settled = await settle(payment.id, 'succeeded');
    expect(settled.status).toBe('succeeded');
    expect(await subscription(payment.subscription_id)).toMatchObject({ status: 'incomplete_expired' });
    expect(types(await newEvents())).toEqual(['payment.succeeded']);
  });
});

describe('payments for an existing subscription drive D15', () => {
  it('renewal succeeded on active → renewed (the period advances); failed on active → past_due; succeeded on past_due → activated', async () => {
    const granted = await grant();
    await newEvents();
    const renewal = await record({ subscription_id: granted.id, status: 'succeeded' });
    expect(renewal).toMatchObject({ billing_reason: 'renewal', amount: 900, subscriber_id: subscriberId });
    const renewed = await subscription(granted.id);
    expect(renewed).toMatchObject({
      status: 'active',
      previous_status: 'active',
      current_period_start: granted.current_period_end,
    });
    expect(Date.parse(renewed.current_period_end)).toBeGreaterThan(Date.parse(granted.current_period_end));
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.renewed']);

    const failed = await record({ subscription_id: granted.id, status: 'failed' });
    expect(failed.billing_reason).toBe('renewal');
    expect(await subscription(granted.id)).toMatchObject({
      status: 'past_due',
      previous_status: 'active',
      has_access: true,
    });
    expect(types(await newEvents())).toEqual(['payment.failed', 'subscription.past_due']);

    // Another failure while past_due has no row: recorded, the subscription stays past_due.
    await record({ subscription_id: granted.id, status: 'failed' });
    expect(await subscription(granted.id)).toMatchObject({ status: 'past_due', previous_status: 'active' });
    expect(types(await newEvents())).toEqual(['payment.failed']);

    clock.advance(HOUR_MS);
    await record({ subscription_id: granted.id, status: 'succeeded' });
    expect(await subscription(granted.id)).toMatchObject({
      status: 'active',
      previous_status: 'past_due',
      current_period_start: isoTime(clock.nowMs()),
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated']);
  });

  it('on trialing: a failed payment → past_due; a succeeded one → activated (trial ended, paid), its period starting when the trial ends', async () => {
    const trialing = await grant({ trial: true });
    await newEvents();
    await record({ subscription_id: trialing.id, status: 'succeeded' });
    const active = await subscription(trialing.id);
    expect(active).toMatchObject({
      status: 'active',
      previous_status: 'trialing',
      current_period_start: trialing.trial_ends_at,
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated']);

    const other = await grant({ trial: true, subscriber_id: await newSubscriber('Bo') });
    await newEvents();
    const pending = await record({ subscription_id: other.id, status: 'pending' });
    expect(await subscription(other.id)).toMatchObject({ status: 'trialing' });
    expect(types(await newEvents())).toEqual(['payment.pending']);
    await settle(pending.id, 'failed');
    expect(await subscription(other.id)).toMatchObject({ status: 'past_due', previous_status: 'trialing' });
    expect(types(await newEvents())).toEqual(['payment.failed', 'subscription.past_due']);
  });

  it('succeeded on unpaid → activated', async () => {
    const granted = await grant();
    await record({ subscription_id: granted.id, status: 'failed' });
    clock.advance(15 * DAY_MS);
    await tick();
    expect(await subscription(granted.id)).toMatchObject({ status: 'unpaid', has_access: false });
    await newEvents();
    await record({ subscription_id: granted.id, status: 'succeeded' });
    expect(await subscription(granted.id)).toMatchObject({
      status: 'active',
      previous_status: 'unpaid',
      has_access: true,
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated']);
  });

  it('manual payments, pending payments and statuses without a row leave the subscription unchanged', async () => {
    const granted = await grant();
    await newEvents();
    const manual = await record({
      subscription_id: granted.id,
      status: 'succeeded',
      billing_reason: 'manual',
      amount: 150,
    });
    expect(manual).toMatchObject({ billing_reason: 'manual', amount: 150 });
    expect(await subscription(granted.id)).toEqual(granted);
    expect(types(await newEvents())).toEqual(['payment.succeeded']);

    await ok('POST', `/v1/subscriptions/${granted.id}/pause`, {});
    const paused = await subscription(granted.id);
    await newEvents();
    await record({ subscription_id: granted.id, status: 'succeeded' });
    await record({ subscription_id: granted.id, status: 'failed' });
    expect(await subscription(granted.id)).toEqual(paused);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'payment.failed']);
  });
});

describe('refunds', () => {
  it('refunds in part, accumulates, becomes refunded when nothing is left, then refuses more (CONFLICT naming the status)', async () => {
    const granted = await grant();
    const payment = await record({ subscription_id: granted.id, status: 'succeeded' });
    await newEvents();
    clock.advance(HOUR_MS);
    const partial = await refund(payment.id, { amount: 300, reason: 'Missed a week' });
    expect(partial).toEqual({
      ...payment,
      amount_refunded: 300,
      status: 'succeeded',
      updated_at: isoTime(clock.nowMs()),
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['payment.refunded']);
    expect(events[0].data).toMatchObject({
      payment: partial,
      refund: { amount: 300, reason: 'Missed a week' },
      subscription: { id: granted.id, status: 'active' },
    });

    expectRestProblem(await call('POST', `/v1/payments/${payment.id}/refund`, { amount: 601 }), 'VALIDATION_FAILED');
    const fullRefund = (await tool(runtime, team.principal, 'refund_payment', { id: payment.id })).structuredContent;
    expect(fullRefund).toMatchObject({ amount_refunded: 900, status: 'refunded' });
    events = await newEvents();
    expect(types(events)).toEqual(['payment.refunded']);
    expect(events[0].data).toMatchObject({ refund: { amount: 600, reason: null } });
    expect(await subscription(granted.id)).toMatchObject({ status: 'active' });

    const problem = expectRestProblem(await call('POST', `/v1/payments/${payment.id}/refund`, {}), 'CONFLICT');
    expect(problem.detail).toContain('refunded');
    expect(await newEvents()).toEqual([]);
  });

  it('cancel: true also cancels the subscription at once, in the same transaction; a canceled subscription refuses it and nothing changes', async () => {
    const payment = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'succeeded' });
    await newEvents();
    const refunded = await refund(payment.id, { cancel: true, reason: 'Asked for a refund' });
    expect(refunded).toMatchObject({ status: 'refunded', amount_refunded: 900 });
    expect(await subscription(payment.subscription_id)).toMatchObject({
      status: 'canceled',
      cancellation_reason: 'Asked for a refund',
      has_access: false,
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.refunded', 'subscription.canceled', 'member.churned']);
    expect(events[0].data).toMatchObject({ subscription: { status: 'canceled' } });

    const second = await record({
      subscription_id: payment.subscription_id,
      status: 'succeeded',
      billing_reason: 'manual',
    });
    await newEvents();
    const problem = expectRestProblem(
      await call('POST', `/v1/payments/${second.id}/refund`, { cancel: true }),
      'CONFLICT',
    );
    expect(problem.detail).toContain('canceled');
    expect(await ok('GET', `/v1/payments/${second.id}`)).toEqual(second);
    expect(await newEvents()).toEqual([]);
  });

  it('refuses to refund a pending or failed payment, naming its status', async () => {
    const granted = await grant();
    const pending = await record({ subscription_id: granted.id, status: 'pending' });
    const failed = await record({ subscription_id: granted.id, status: 'failed', billing_reason: 'manual' });
    expect(expectRestProblem(await call('POST', `/v1/payments/${pending.id}/refund`, {}), 'CONFLICT').detail).toContain(
      'is pending',
    );
    expect(
      expectToolProblem(await tool(runtime, team.principal, 'refund_payment', { id: failed.id }), 'CONFLICT').detail,
    ).toContain('is failed');
    expectRestProblem(await call('POST', `/v1/payments/${randomUUID()}/refund`, {}), 'NOT_FOUND');
  });
});
