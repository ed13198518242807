import type Stripe from 'stripe';
import { isoTime } from '../../clock.js';
import { newUuid } from '../../ids.js';
import { entity, keys } from '../../store/keys.js';
import { readProviderCustomerSubscriber, readProviderPaymentRef } from '../../store/payments/reads.js';
import {
  putProviderCustomer,
  putProviderPaymentRef,
  putProviderSubscriptionLink,
} from '../../store/payments/writes.js';
import { trialUseStore } from '../../store/subscriptions/trials.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { logger } from '../../logger.js';
import { CHECKOUT_TRIAL_DAYS_METADATA } from '../../providers/stripe-checkout.js';
import type { Plan } from '../plans/schema.js';
import { withinTierLimit } from '../billing/repository.js';
import { giftCheckoutCompleted } from '../gifts/paid.js';
import { loadProject, toProject } from '../projects/repository.js';
import { getSubscriber, prepareSubscriber, type PreparedSubscriber } from '../subscribers/repository.js';
import { CreateSubscriberRequest } from '../subscribers/schema.js';
import type { Subscriber } from '../subscribers/schema.js';
import { DAY_MS } from '../../clock.js';
import { applyPlatformAccess, type PlatformAccessFollowUp } from '../subscriptions/platform-access.js';
import { addSubscriptionCreation, newSubscription, requireSubscribable } from '../subscriptions/creation.js';
import { discountAfter } from '../coupons/decisions.js';
import { countRedemption, providerDiscount } from '../coupons/redemption.js';
import { paymentDiscountOf, priceMismatch } from './decisions.js';
import { recordProviderPayment } from './provider-payments.js';
import { newPayment } from './recording.js';
import { addPaymentOfNewSubscription } from './writes.js';
import type { Payment } from './schema.js';
import {
  applied,
  CHECKOUT_WAIT_SECONDS,
  idOf,
  ignored,
  linkOf,
  planOf,
  STRIPE,
  StripeEventNotReady,
  type EventContext,
  type StripeEventOutcome,
} from './stripe-event-context.js';
import { ttlAttribute } from '../../store/ttl.js';

/**
 * Checkout events of a project's Stripe account (DESIGN D16, D22, D26): `checkout.session.completed` creates
 * the subscriber (or finds them by the Stripe customer) and the subscription billed through Stripe, and
 * `checkout.session.async_payment_*` settles a delayed payment. Mapped from `stripe-events.ts`.
 */

/**
 * How long (seconds) the reference from a completed Checkout Session to its subscription is kept for the welcome page.
 */
const CHECKOUT_SESSION_REF_SECONDS = 30 * 24 * 3600;

// ---------------------------------------------------------------------------------------------------
// checkout.session.completed
// ---------------------------------------------------------------------------------------------------

/** The subscriber fields a Checkout Session gives (invalid ones dropped): e-mail, name, the Stripe customer. */
function subscriberInput(session: Stripe.Checkout.Session, customerId: string | null): CreateSubscriberRequest {
  const wanted = {
    email: session.customer_details?.email ?? undefined,
    display_name: session.customer_details?.name ?? undefined,
    provider_customer_id: customerId ?? undefined,
  };
  const parsed = CreateSubscriberRequest.safeParse(wanted);
  if (parsed.success) return parsed.data;
  const fallback = CreateSubscriberRequest.safeParse({ provider_customer_id: customerId ?? undefined });
  return fallback.success ? fallback.data : { consent: false };
}

/**
 * The project's coupon Stripe applied to a completed session (our code in `metadata.promotion_code`, or the coupon and
 * promotion code ids of `discounts`), with the discount it starts at `startIso`; null without one.
 */
async function checkoutOffer(context: EventContext, session: Stripe.Checkout.Session, startIso: string) {
  const applied = session.discounts?.[0];
  const codeText = session.metadata?.promotion_code ?? null;
  if (!applied && !codeText) return null;
  return providerDiscount(
    context.runtime.store,
    context.principal.teamId,
    context.projectId,
    { couponId: idOf(applied?.coupon), promotionCodeId: idOf(applied?.promotion_code), codeText },
    startIso,
  );
}

/**
 * The trial days a completed session started (D33): its `trial_days` metadata (set when it was created; "0" for a
 * plan sold without its trial), else the plan's for a subscription-mode session of a recurring plan.
 */
export function sessionTrialDays(
  session: Pick<Stripe.Checkout.Session, 'mode' | 'metadata'>,
  plan: Pick<Plan, 'interval' | 'trial_days'>,
): number {
  if (session.mode !== 'subscription' || plan.interval === 'one_time') return 0;
  const recorded = Number(session.metadata?.[CHECKOUT_TRIAL_DAYS_METADATA] ?? Number.NaN);
  return Number.isInteger(recorded) && recorded >= 0 ? recorded : plan.trial_days;
}

/**
 * `checkout.session.completed`: finds or creates the subscriber by Stripe customer (tier limit counted) and creates the
 * subscription on `metadata.plan_id` (else a line item's synced plan): mode `subscription` → pending; mode `payment`
 * paid → active with its payment, same transaction (pending with the payment flagged when it does not match the plan's
 * price). A trial (its days from the session, {@link sessionTrialDays}) starts trialing and uses up the buyer's
 * e-mail's one trial in the project (D33; a second one that slipped through is recorded and logged). An already linked
 * Stripe subscription changes nothing. A gift's session (`metadata.gift_id`) only marks the gift paid
 * (`../gifts/paid.ts`).
 */
export async function checkoutCompleted(
  context: EventContext,
  session: Stripe.Checkout.Session,
): Promise<StripeEventOutcome> {
  const { runtime, principal, projectId } = context;
  const teamId = principal.teamId;
  if (session.mode !== 'subscription' && session.mode !== 'payment')
    return ignored(`checkout mode ${session.mode} creates no subscription`);
  const giftId = session.metadata?.gift_id;
  if (giftId) return giftCheckoutCompleted(runtime, teamId, projectId, giftId, session);
  const stripeSubscriptionId = session.mode === 'subscription' ? idOf(session.subscription) : null;
  if (session.mode === 'subscription' && !stripeSubscriptionId)
    return ignored('the subscription-mode session names no subscription');
  if (stripeSubscriptionId && (await linkOf(context, stripeSubscriptionId)))
    return ignored(`Stripe subscription ${stripeSubscriptionId} is linked already`);
  const priceIds = (session.line_items?.data ?? []).flatMap((item) => (item.price ? [item.price.id] : []));
  const plan = await planOf(context, session.metadata, priceIds);
  if (!plan)
    return ignored('no plan: the session has no metadata.plan_id of this project and no line item with a synced price');

  const customerId = idOf(session.customer);
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const customerOf = customerId
    ? await readProviderCustomerSubscriber(runtime.store, teamId, projectId, STRIPE, customerId)
    : undefined;
  const existing: Subscriber | null = customerOf ? await getSubscriber(runtime.store, principal, customerOf) : null;
  requireSubscribable(project, plan, existing);
  const prepared: PreparedSubscriber | undefined = existing
    ? undefined
    : await prepareSubscriber(runtime, principal, projectId, subscriberInput(session, customerId));
  const subscriber = existing ?? prepared!.subscriber;

  const paymentIntentId = session.mode === 'payment' ? idOf(session.payment_intent) : null;
  const charged =
    session.mode === 'payment' &&
    paymentIntentId !== null &&
    (session.amount_total ?? 0) > 0 &&
    session.currency !== null;
  // A delayed payment method (SEPA debit, bank transfer…): the session completes unpaid and
  // checkout.session.async_payment_succeeded or _failed settles the PaymentIntent later.
  const paymentStatus: Payment['status'] | null = !charged
    ? null
    : session.payment_status === 'paid'
      ? 'succeeded'
      : session.payment_status === 'unpaid'
        ? 'pending'
        : null;
  // A recurring plan with a trial starts trialing: its first invoice (zero, or the first charge after
  // the trial) settles nothing before the trial ends. Otherwise the first invoice activates it.
  const trialDays = sessionTrialDays(session, plan);
  const trialEmail = trialDays > 0 ? (session.customer_details?.email ?? session.customer_email ?? null) : null;
  if (trialEmail && (await trialUseStore.hadTrial(runtime.store, teamId, projectId, trialEmail)))
    // Checked before the checkout was offered; a second trial started meanwhile (two checkouts at once, or one opened
    // without an e-mail) is Stripe's fact: recorded as it is.
    logger.warn('a second trial for one e-mail address in a project was completed at Stripe; recorded as it is', {
      project_id: projectId,
      plan_id: plan.id,
      checkout_session_id: session.id,
    });
  const nowMs = runtime.clock.nowMs();
  const paid = { amount: session.amount_total ?? 0, currency: (session.currency ?? '').toUpperCase() };
  const offer = await checkoutOffer(context, session, isoTime(nowMs));
  // A paid session whose currency or amount does not match the plan's price: the payment is recorded flagged and the
  // subscription waits (pending) for the creator's acceptance.
  const mismatch =
    paymentStatus === 'succeeded'
      ? priceMismatch(
          { ...paid, billing_reason: 'subscription_create' },
          { price_version: plan.price_version, discount: offer?.discount ?? null },
          plan,
          true,
        )
      : null;
  const subscription = newSubscription({
    projectId,
    subscriberId: subscriber.id,
    plan,
    source: 'provider',
    nowMs,
    startMs: nowMs,
    trialEndMs: trialDays > 0 ? nowMs + trialDays * DAY_MS : null,
    endsAtMs: plan.interval === 'one_time' ? nowMs + (plan.access_days ?? 1) * DAY_MS : null,
    // `succeeded` for a trial: nothing is awaited before it starts (see SubscriptionBilling).
    billing: {
      provider: STRIPE,
      firstPayment: (paymentStatus === 'succeeded' && !mismatch) || trialDays > 0 ? 'succeeded' : 'pending',
    },
  });
  subscription.discount = offer
    ? discountAfter(offer.discount, subscription.current_period_start, subscription.current_period_end)
    : null;
  const now = isoTime(nowMs);
  const payment: Payment | null = paymentStatus
    ? newPayment({
        id: newUuid(),
        subscription,
        ...paid,
        status: paymentStatus,
        provider: STRIPE,
        providerPaymentId: paymentIntentId,
        billingReason: 'subscription_create',
        nowIso: now,
        mismatch,
        discount: paymentDiscountOf(offer?.discount ?? null, session.total_details?.amount_discount ?? 0),
      })
    : null;
  let followUp: PlatformAccessFollowUp | null = null;
  await withinTierLimit(runtime, teamId, 'subscribers', () =>
    unitOfWork(runtime, teamId, async (tx) => {
      if (payment) {
        addPaymentOfNewSubscription(tx, teamId, payment, { before: null, after: subscription, subscriber, plan });
        putProviderPaymentRef(tx, teamId, payment, STRIPE, paymentIntentId!);
      }
      // Stripe applied the code already: it is counted, never refused.
      if (offer) countRedemption(tx, teamId, offer, now, false);
      if (customerId && prepared) {
        putProviderCustomer(tx, teamId, projectId, STRIPE, customerId, subscriber.id);
      }
      if (stripeSubscriptionId) {
        // No last applied event yet: Stripe creates the first invoice's events BEFORE the session completes,
        // so they must still apply after the creation (the creation orders nothing).
        putProviderSubscriptionLink(tx, teamId, projectId, STRIPE, stripeSubscriptionId, subscription.id);
      }
      // The join page's welcome page (DESIGN D26) finds the subscription by the session id Stripe sends the buyer back
      // with.
      tx.put({
        ...keys.checkoutSession(projectId, session.id),
        entity: entity.checkoutSession,
        team_id: teamId,
        project_id: projectId,
        subscription_id: subscription.id,
        expires_at: ttlAttribute(nowMs, CHECKOUT_SESSION_REF_SECONDS),
      });
      ({ followUp } = await addSubscriptionCreation(tx, runtime, principal, {
        subscription,
        subscriber,
        plan,
        accessCode: null,
        newSubscriber: prepared,
        providerSubscriptionId: stripeSubscriptionId,
        trialEmail,
      }));
    }),
  );
  await applyPlatformAccess(runtime, teamId, followUp);
  return applied;
}

// ---------------------------------------------------------------------------------------------------
// checkout.session.async_payment_succeeded / checkout.session.async_payment_failed
// ---------------------------------------------------------------------------------------------------

/**
 * `checkout.session.async_payment_succeeded` / `_failed` (mode `payment`): the session's pending payment → succeeded
 * (activates, D15) or failed (expires after 23 hours unless paid). Before its `checkout.session.completed` (within
 * {@link CHECKOUT_WAIT_SECONDS}) → {@link StripeEventNotReady}; a session of no payment of this project is ignored.
 */
export async function checkoutPaymentSettled(
  context: EventContext,
  session: Stripe.Checkout.Session,
  status: 'succeeded' | 'failed',
): Promise<StripeEventOutcome> {
  const paymentIntentId = idOf(session.payment_intent);
  if (session.mode !== 'payment' || !paymentIntentId)
    return ignored('only a payment-mode session with a PaymentIntent settles a payment');
  const ref = await readProviderPaymentRef(
    context.runtime.store,
    context.principal.teamId,
    context.projectId,
    STRIPE,
    paymentIntentId,
  );
  if (!ref) {
    const ageSeconds = Math.floor(context.runtime.clock.nowMs() / 1000) - context.created;
    if (ageSeconds < CHECKOUT_WAIT_SECONDS)
      throw new StripeEventNotReady(
        `no payment has PaymentIntent ${paymentIntentId} yet (its checkout.session.completed comes first)`,
      );
    return ignored(`no payment of this project has PaymentIntent ${paymentIntentId}`);
  }
  const outcome = await recordProviderPayment(context.runtime, context.principal, {
    subscriptionId: ref.subscription_id,
    projectId: context.projectId,
    provider: STRIPE,
    providerPaymentId: paymentIntentId,
    status,
    amount: session.amount_total ?? 0,
    currency: (session.currency ?? '').toUpperCase(),
    billingReason: 'subscription_create',
    checkAmount: true,
    drivesSubscription: true,
  });
  if (!outcome.changed) return ignored(`payment ${outcome.payment.id} is ${outcome.payment.status} already`);
  return applied;
}
