import type Stripe from 'stripe';
import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import { type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import type { Plan } from '../plans/schema.js';
import { planChangeTrigger, type Decision } from '../subscriptions/transition-decisions.js';
import { changeSubscriptionWith } from '../subscriptions/transitions.js';
import type { Subscription } from '../subscriptions/schema.js';
import { ruleFor } from '../subscriptions/state-machine.js';
import { recordProviderPayment, recordProviderRefund } from './provider-payments.js';
import type { BillingReason } from './schema.js';
import {
  applied,
  CHECKOUT_WAIT_SECONDS,
  idOf,
  ignored,
  isFresh,
  linkOf,
  markApplied,
  planOf,
  STRIPE,
  StripeEventNotReady,
  type EventContext,
  type StripeEventOutcome,
  type SubscriptionLink,
} from './stripe-event-context.js';
import { checkoutCompleted, checkoutPaymentSettled } from './stripe-checkout-events.js';

/**
 * A project's Stripe events mapped to the domain (DESIGN D15, D16, D22), through the same use cases as everywhere
 * (checkout, invoices, subscription updates, refunds). Out of order: the subscription link keeps per event family the
 * last applied `created` (unix SECONDS), moved forward only; older events change no state. A transition D15 does not
 * allow is ignored, not an error. Echoes of our own changes (D27, `provider-change.ts`) find nothing to change;
 * `provider_change_created` makes older snapshots stale.
 */

/**
 * Problems that mean "this event does not apply" rather than "try again" (a gone plan, a banned subscriber, a tier
 * limit…).
 */
const NOT_APPLICABLE = new Set(['NOT_FOUND', 'CONFLICT', 'VALIDATION_FAILED', 'TIER_LIMIT_REACHED']);

/**
 * Applies one verified Stripe event of project `projectId` as `principal` (the hook's principal of the
 * project's team). `event.created` is unix SECONDS. Returns what it did; throws {@link StripeEventNotReady}
 * (send again later) and store failures (the hook answers 5xx). Problems of the domain that mean the
 * event does not apply (NOT_FOUND, CONFLICT, VALIDATION_FAILED, TIER_LIMIT_REACHED) become an ignored
 * outcome naming them.
 */
export async function applyStripeEvent(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  event: Stripe.Event,
): Promise<StripeEventOutcome> {
  const context: EventContext = { runtime, principal, projectId, created: event.created };
  try {
    switch (event.type) {
      case 'checkout.session.completed':
        return await checkoutCompleted(context, event.data.object);
      case 'checkout.session.async_payment_succeeded':
        return await checkoutPaymentSettled(context, event.data.object, 'succeeded');
      case 'checkout.session.async_payment_failed':
        return await checkoutPaymentSettled(context, event.data.object, 'failed');
      case 'invoice.paid':
        return await invoiceSettled(context, event.data.object, 'succeeded');
      case 'invoice.payment_failed':
        return await invoiceSettled(context, event.data.object, 'failed');
      case 'customer.subscription.updated':
        return await subscriptionChanged(context, event.data.object, false);
      case 'customer.subscription.deleted':
        return await subscriptionChanged(context, event.data.object, true);
      case 'charge.refunded':
        return await chargeRefunded(context, event.data.object);
      default:
        return ignored(`${event.type} is not mapped`);
    }
  } catch (error) {
    if (error instanceof ProblemError && NOT_APPLICABLE.has(error.code))
      return ignored(`${error.code}: ${error.message}`);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------
// invoice.paid / invoice.payment_failed
// ---------------------------------------------------------------------------------------------------

/**
 * Our billing reason of a Stripe invoice's `billing_reason`: `subscription_create` stays, `manual` stays, every other
 * (cycle, update, threshold…) is a renewal.
 */
export function billingReasonOf(reason: Stripe.Invoice.BillingReason | null): BillingReason {
  if (reason === 'subscription_create') return 'subscription_create';
  if (reason === 'manual') return 'manual';
  return 'renewal';
}

/** The Stripe billing reasons of invoices that charge the plan's whole price (less flags the payment). */
const AMOUNT_CHECKED_REASONS = new Set<Stripe.Invoice.BillingReason | null>([
  'subscription_create',
  'subscription_cycle',
]);

/** The PaymentIntent of an invoice (`invoice.payments`, the first with one), or null when the event carries none. */
function paymentIntentOf(invoice: Stripe.Invoice): string | null {
  for (const entry of invoice.payments?.data ?? []) {
    const id = idOf(entry.payment?.payment_intent);
    if (id) return id;
  }
  return null;
}

/**
 * `invoice.paid` / `invoice.payment_failed` of a linked Stripe subscription: the payment (id: the PaymentIntent, else
 * the invoice) and its D15 transition (none for a stale event, nor for a paid invoice that does not match the plan's
 * price: flagged, see `recordProviderPayment`). Not linked yet: the first invoice within {@link
 * CHECKOUT_WAIT_SECONDS} → {@link StripeEventNotReady}, any other is ignored.
 */
async function invoiceSettled(
  context: EventContext,
  invoice: Stripe.Invoice,
  status: 'succeeded' | 'failed',
): Promise<StripeEventOutcome> {
  const stripeSubscriptionId = idOf(invoice.parent?.subscription_details?.subscription);
  if (!stripeSubscriptionId) return ignored('the invoice is not a subscription\u2019s');
  const link = await linkOf(context, stripeSubscriptionId);
  if (!link) {
    const ageSeconds = Math.floor(context.runtime.clock.nowMs() / 1000) - context.created;
    if (invoice.billing_reason === 'subscription_create' && ageSeconds < CHECKOUT_WAIT_SECONDS) {
      throw new StripeEventNotReady(
        `Stripe subscription ${stripeSubscriptionId} is not linked yet (its checkout.session.completed comes first)`,
      );
    }
    return ignored(`Stripe subscription ${stripeSubscriptionId} is not linked to a subscription of this project`);
  }
  const amount = status === 'succeeded' ? invoice.amount_paid : invoice.amount_due;
  const fresh = isFresh(context, link, 'invoice');
  if (amount <= 0) return zeroAmountInvoice(context, link, invoice, status, fresh);
  const outcome = await recordProviderPayment(context.runtime, context.principal, {
    subscriptionId: link.subscriptionId,
    projectId: context.projectId,
    provider: STRIPE,
    providerPaymentId: paymentIntentOf(invoice) ?? invoice.id,
    status,
    amount,
    currency: invoice.currency.toUpperCase(),
    billingReason: billingReasonOf(invoice.billing_reason),
    // A first or a period's invoice is for the plan's price; a proration (subscription_update) or a manual invoice
    // may legitimately be for less, so only its currency is checked.
    checkAmount: AMOUNT_CHECKED_REASONS.has(invoice.billing_reason),
    discountAmount: (invoice.total_discount_amounts ?? []).reduce((sum, entry) => sum + entry.amount, 0),
    drivesSubscription: fresh,
    alongside: fresh ? (tx) => markApplied(tx, context, link, 'invoice') : undefined,
  });
  if (!outcome.changed) return ignored(`payment ${outcome.payment.id} is ${outcome.payment.status} already`);
  return applied;
}

/**
 * A zero-amount invoice (a trial's first invoice, a 100 % coupon): there is no payment to record. A paid
 * first invoice (`subscription_create`) of a subscription still `pending` activates it (D15
 * `payment_succeeded`, no `payment.*` event); anything else is ignored.
 */
async function zeroAmountInvoice(
  context: EventContext,
  link: SubscriptionLink,
  invoice: Stripe.Invoice,
  status: 'succeeded' | 'failed',
  fresh: boolean,
): Promise<StripeEventOutcome> {
  if (status !== 'succeeded' || invoice.billing_reason !== 'subscription_create' || !fresh)
    return ignored('the invoice is for a zero amount: no payment to record');
  let skipped: string | null = null;
  await changeSubscriptionWith(
    context.runtime,
    context.principal,
    link.subscriptionId,
    (subscription) => {
      if (subscription.status !== 'pending')
        skipped = `a zero-amount first invoice changes nothing for a ${subscription.status} subscription`;
      return skipped ? null : { trigger: 'payment_succeeded' };
    },
    (tx) => markApplied(tx, context, link, 'invoice'),
  );
  return skipped ? ignored(skipped) : applied;
}

// ---------------------------------------------------------------------------------------------------
// customer.subscription.updated / customer.subscription.deleted
// ---------------------------------------------------------------------------------------------------

/**
 * The D15 change a Stripe subscription's state asks of ours, or null when they agree (pure): canceled,
 * incomplete_expired, unpaid, pause/resume, cancel at period end (or `cancel_at`), or a price synced to `targetPlan` →
 * upgrade / downgrade. One change per event.
 */
export function stripeSubscriptionDecision(
  stripeSubscription: Stripe.Subscription,
  deleted: boolean,
  subscription: Subscription,
  plan: Plan,
  targetPlan: Plan | null,
): Decision | null {
  const status = stripeSubscription.status;
  if (deleted || status === 'canceled')
    return subscription.status === 'canceled'
      ? null
      : { trigger: 'cancel', reason: stripeSubscription.cancellation_details?.reason ?? null };
  if (status === 'incomplete_expired') return { trigger: 'incomplete_expired' };
  if (status === 'unpaid') return subscription.status === 'unpaid' ? null : { trigger: 'retries_exhausted' };
  const paused = status === 'paused' || stripeSubscription.pause_collection !== null;
  if (paused !== (subscription.status === 'paused')) return { trigger: paused ? 'pause' : 'resume' };
  const cancelling = stripeSubscription.cancel_at_period_end || stripeSubscription.cancel_at !== null;
  if (cancelling !== (subscription.status === 'pending_cancellation')) {
    return cancelling
      ? { trigger: 'cancel_at_period_end', reason: stripeSubscription.cancellation_details?.reason ?? null }
      : { trigger: 'resume' };
  }
  if (targetPlan && targetPlan.id !== plan.id)
    return { trigger: planChangeTrigger(plan, targetPlan), newPlan: targetPlan };
  return null;
}

/**
 * `customer.subscription.updated` and `.deleted` of a linked Stripe subscription: the change
 * {@link stripeSubscriptionDecision} names, applied through the subscription change path (its one
 * event, member access, counters and deadline) with the link's last applied event moved forward in the
 * same transaction. Ignored: an unlinked subscription, an event older than the last applied one, a
 * change D15 does not allow from the current status, nothing to change.
 */
async function subscriptionChanged(
  context: EventContext,
  stripeSubscription: Stripe.Subscription,
  deleted: boolean,
): Promise<StripeEventOutcome> {
  const link = await linkOf(context, stripeSubscription.id);
  if (!link)
    return ignored(`Stripe subscription ${stripeSubscription.id} is not linked to a subscription of this project`);
  if (!isFresh(context, link, 'subscription'))
    return ignored(
      `older (created ${context.created}) than the last customer.subscription event applied to subscription ${link.subscriptionId} (${link.lastApplied.subscription})`,
    );
  const priceIds = stripeSubscription.items.data.map((item) => item.price.id);
  const targetPlan = deleted ? null : await planOf(context, stripeSubscription.metadata, priceIds);
  let skipped: string | null = null;
  await changeSubscriptionWith(
    context.runtime,
    context.principal,
    link.subscriptionId,
    (subscription, plan) => {
      const decision = stripeSubscriptionDecision(stripeSubscription, deleted, subscription, plan, targetPlan);
      if (!decision) skipped = `subscription ${subscription.id} already matches Stripe (${subscription.status})`;
      else if (!ruleFor(subscription.status, decision.trigger))
        skipped = `D15 allows no ${decision.trigger} from ${subscription.status}`;
      return skipped ? null : decision;
    },
    (tx) => markApplied(tx, context, link, 'subscription'),
  );
  return skipped ? ignored(skipped) : applied;
}

// ---------------------------------------------------------------------------------------------------
// charge.refunded
// ---------------------------------------------------------------------------------------------------

/**
 * `charge.refunded`: the payment of the charge's PaymentIntent records what Stripe refunded beyond what
 * it holds (`amount_refunded` is cumulative), with one `payment.refunded`; a refund already recorded
 * (the Refunds API call of `refund_payment`) changes nothing.
 */
async function chargeRefunded(context: EventContext, charge: Stripe.Charge): Promise<StripeEventOutcome> {
  const paymentIntentId = idOf(charge.payment_intent);
  if (!paymentIntentId) return ignored('the charge has no PaymentIntent');
  const reason = charge.refunds?.data.find((refund) => refund.reason)?.reason ?? null;
  const outcome = await recordProviderRefund(
    context.runtime,
    context.principal,
    { projectId: context.projectId, provider: STRIPE, providerPaymentId: paymentIntentId },
    charge.amount_refunded,
    reason,
  );
  if (!outcome) return ignored(`no payment of this project has PaymentIntent ${paymentIntentId}`);
  if (!outcome.changed) return ignored(`payment ${outcome.payment.id} has its refund recorded already`);
  return applied;
}
