import { discountApplies, discountedAmount, discountOf } from '../coupons/decisions.js';
import { countRedemption, redeemableCode } from '../coupons/redemption.js';
import type { Discount } from '../coupons/discount.js';
import type { Principal } from '../../auth/principal.js';
import { requireAbility } from '../../auth/authorize.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { isoTime } from '../../clock.js';
import { ProblemError, type FieldError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { getPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { loadProject, toProject } from '../projects/repository.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import type { Project } from '../projects/schema.js';
import { createSubscription } from '../subscriptions/creation.js';
import { changeSubscriptionWith } from '../subscriptions/transitions.js';
import type { Subscription } from '../subscriptions/schema.js';
import { AWAITING_FIRST_PAYMENT, invalid, paymentDiscountOf, paymentTrigger } from './decisions.js';
import { listPayments } from './queries.js';
import { writeNewPayment } from './writes.js';
import type { BillingReason, Payment, PaymentDiscount, PaymentMismatch, RecordPaymentRequest } from './schema.js';

/** Recording payments (DESIGN D16): the one builder of new payments, and the creator's recorded `manual` payments. */

/** The provider whose payments the creator records (DESIGN D16); other providers report theirs themselves. */
const RECORDING_PROVIDER: PaymentProvider = 'manual';

/**
 * The provider whose payments the creator records on this project: `manual` must be connected.
 * Errors: CONFLICT (no provider connected, or another one, whose payments it reports itself).
 */
function recordingProvider(project: Project): PaymentProvider {
  const connected = project.payment_provider?.provider;
  if (connected === RECORDING_PROVIDER) return connected;
  if (!connected) {
    throw new ProblemError(
      'CONFLICT',
      `Project ${project.id} has no payment provider connected: connect manual first (PUT /v1/projects/${project.id}/payment-provider) to record payments.`,
    );
  }
  throw new ProblemError(
    'CONFLICT',
    `Project ${project.id} is connected to ${connected}, which reports its payments itself; only the manual provider takes recorded payments.`,
  );
}

/**
 * A new payment of `subscription` (DESIGN D16) as first written: nothing refunded yet, created and
 * updated at `nowIso`. `amount` in the currency's MINOR unit; `currency` ISO 4217 upper case; `mismatch` how a
 * provider-reported payment differs from its plan's price (default null). The one builder of new payments (recorded,
 * first payments of new subscriptions, provider-reported).
 */
export function newPayment(facts: {
  id: string;
  subscription: Pick<Subscription, 'id' | 'project_id' | 'subscriber_id'>;
  amount: number;
  currency: string;
  status: Payment['status'];
  provider: PaymentProvider;
  providerPaymentId: string | null;
  billingReason: BillingReason;
  nowIso: string;
  mismatch?: PaymentMismatch | null;
  discount?: PaymentDiscount | null;
}): Payment {
  return {
    id: facts.id,
    project_id: facts.subscription.project_id,
    subscriber_id: facts.subscription.subscriber_id,
    subscription_id: facts.subscription.id,
    amount: facts.amount,
    amount_refunded: 0,
    currency: facts.currency,
    status: facts.status,
    provider: facts.provider,
    provider_payment_id: facts.providerPaymentId,
    billing_reason: facts.billingReason,
    mismatch: facts.mismatch ?? null,
    discount: facts.discount ?? null,
    created_at: facts.nowIso,
    updated_at: facts.nowIso,
  };
}

/**
 * The amount and currency of a recorded payment: given, or the plan's price and currency. Errors: VALIDATION_FAILED
 * (another currency).
 */
function priceOf(
  input: Pick<RecordPaymentRequest, 'amount' | 'currency'>,
  plan: Plan,
  discount: Discount | null = null,
): { amount: number; currency: string; discount: PaymentDiscount | null } {
  if (input.currency !== undefined && input.currency !== plan.currency) {
    throw invalid(`Plan ${plan.id} is priced in ${plan.currency}: a payment for it is in ${plan.currency}.`, [
      { path: 'currency', message: `must be ${plan.currency}, the plan\u2019s currency` },
    ]);
  }
  if (input.amount === undefined && plan.amount === 0) {
    throw invalid(`Plan ${plan.id} is free: give the amount paid.`, [
      { path: 'amount', message: 'is required for a payment on a free plan' },
    ]);
  }
  const amount = input.amount ?? (discount ? discountedAmount(plan.amount, plan.currency, discount) : plan.amount);
  const off = discount ? plan.amount - discountedAmount(plan.amount, plan.currency, discount) : 0;
  return { amount, currency: plan.currency, discount: paymentDiscountOf(discount, off) };
}

/**
 * The billing reason of a payment recorded for `subscription`: given, or `subscription_create` while it
 * awaits its first payment (pending, incomplete) and `renewal` otherwise. Errors: CONFLICT (a given
 * `subscription_create` for a subscription not awaiting its first payment, or `renewal` for one that does).
 */
function billingReasonFor(given: BillingReason | undefined, subscription: Subscription): BillingReason {
  const awaitingFirst = AWAITING_FIRST_PAYMENT.includes(subscription.status);
  if (given === 'subscription_create' && !awaitingFirst) {
    throw new ProblemError(
      'CONFLICT',
      `Subscription ${subscription.id} is ${subscription.status}: a subscription_create payment is only for a subscription awaiting its first payment (pending or incomplete); record a renewal or manual payment.`,
    );
  }
  if (given === 'renewal' && awaitingFirst) {
    throw new ProblemError(
      'CONFLICT',
      `Subscription ${subscription.id} is ${subscription.status}, awaiting its first payment: record a subscription_create (or manual) payment, not a renewal.`,
    );
  }
  return given ?? (awaitingFirst ? 'subscription_create' : 'renewal');
}

/**
 * Records a `manual` payment (DESIGN D16) for `subscription_id`, or as the first of a NEW provider-billed subscription
 * (`subscriber_id` + `plan_id`, D15 "(new)"), in ONE transaction. Errors: NOT_FOUND; VALIDATION_FAILED (forms,
 * currency, free plan, reason); TOKEN_MISSING_ABILITY (`project-subscription:create`); CONFLICT (no manual provider,
 * status, inactive, banned, races).
 */
export async function recordPayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: RecordPaymentRequest,
): Promise<Payment> {
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const provider = recordingProvider(project);
  const newSubscription = input.subscriber_id !== undefined || input.plan_id !== undefined;
  if (input.subscription_id !== undefined && newSubscription) {
    throw invalid('Give either subscription_id, or subscriber_id and plan_id for a new subscription, not both.', [
      { path: 'subscription_id', message: 'must be omitted with subscriber_id and plan_id' },
    ]);
  }
  if (input.subscription_id === undefined && !newSubscription) {
    throw invalid(
      'Give the subscription the payment is for (subscription_id), or subscriber_id and plan_id for a new subscription.',
      [{ path: 'subscription_id', message: 'is required without subscriber_id and plan_id' }],
    );
  }
  const paymentId = newUuid();
  if (input.subscription_id === undefined)
    return recordFirstPayment(runtime, principal, projectId, provider, paymentId, input);
  if (input.promotion_code !== undefined)
    throw invalid('A promotion code starts a new subscription: give it with subscriber_id and plan_id.', [
      { path: 'promotion_code', message: 'applies to a new subscription (subscriber_id and plan_id) only' },
    ]);
  const subscriptionId = input.subscription_id;
  return retryOnLostRace(
    async () => {
      let payment: Payment | undefined;
      await changeSubscriptionWith(
        runtime,
        principal,
        subscriptionId,
        (subscription, plan) => {
          if (subscription.project_id !== projectId)
            throw new ProblemError('NOT_FOUND', `No subscription ${subscriptionId} in project ${projectId}.`);
          const now = isoTime(runtime.clock.nowMs());
          const discount = discountApplies(subscription.discount, now) ? subscription.discount : null;
          payment = newPayment({
            id: paymentId,
            subscription,
            ...priceOf(input, plan, discount),
            status: input.status,
            provider,
            providerPaymentId: input.provider_payment_id ?? null,
            billingReason: billingReasonFor(input.billing_reason, subscription),
            nowIso: now,
          });
          const trigger = paymentTrigger(payment, subscription);
          return trigger ? { trigger } : null;
        },
        (tx, change) => writeNewPayment(tx, principal.teamId, payment!, change),
      );
      return payment!;
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Subscription ${subscriptionId} kept changing while this request ran; read it again and retry.`,
        ),
    },
  );
}

/** The first payment of a new subscription billed through `provider` (see {@link recordPayment}). */
async function recordFirstPayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  provider: PaymentProvider,
  paymentId: string,
  input: RecordPaymentRequest,
): Promise<Payment> {
  const errors: FieldError[] = [];
  if (input.subscriber_id === undefined) errors.push({ path: 'subscriber_id', message: 'is required with plan_id' });
  if (input.plan_id === undefined) errors.push({ path: 'plan_id', message: 'is required with subscriber_id' });
  if (input.billing_reason !== undefined && input.billing_reason !== 'subscription_create')
    errors.push({ path: 'billing_reason', message: 'must be subscription_create (or omitted) for a new subscription' });
  if (errors.length)
    throw invalid(
      'A new subscription\u2019s first payment needs subscriber_id and plan_id, and its billing reason is subscription_create.',
      errors,
    );
  requireAbility(principal, 'project-subscription:create');
  const plan = await getPlan(runtime.store, principal, input.plan_id!);
  if (plan.project_id !== projectId)
    throw new ProblemError('NOT_FOUND', `No plan ${input.plan_id} in project ${projectId}.`);
  if (plan.amount === 0)
    throw invalid(
      `Plan ${plan.id} is free: its subscriptions need no payment (create them with POST /v1/projects/${projectId}/subscriptions).`,
      [{ path: 'plan_id', message: 'must be a priced plan' }],
    );
  const nowMs = runtime.clock.nowMs();
  const offer = input.promotion_code
    ? await redeemableCode(runtime.store, principal.teamId, projectId, input.promotion_code, plan, nowMs, {
        firstTransaction: async () =>
          (await listPayments(runtime.store, principal, projectId, { limit: 1, subscriber_id: input.subscriber_id }))
            .data.length === 0,
      })
    : null;
  const discount = offer ? discountOf(offer.coupon, offer.code, isoTime(nowMs), null) : null;
  const price = priceOf(input, plan, discount);
  let payment: Payment | undefined;
  await createSubscription(
    runtime,
    principal,
    projectId,
    { subscriber_id: input.subscriber_id!, plan_id: plan.id },
    {
      billing: { provider, firstPayment: input.status },
      discount: discount ?? undefined,
      alongside: (tx, change) => {
        if (offer)
          countRedemption(
            tx,
            principal.teamId,
            { coupon: offer.coupon, code: offer.code.code },
            change.after.created_at,
            true,
          );
        payment = newPayment({
          id: paymentId,
          subscription: change.after,
          ...price,
          status: input.status,
          provider,
          providerPaymentId: input.provider_payment_id ?? null,
          billingReason: 'subscription_create',
          nowIso: change.after.created_at,
        });
        writeNewPayment(tx, principal.teamId, payment, change);
      },
    },
  );
  return payment!;
}
