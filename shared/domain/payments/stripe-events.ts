import type Stripe from 'stripe';
import type { Principal } from '../../auth/principal.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { entity, keys } from '../../store/keys.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { withinTierLimit } from '../billing/repository.js';
import { getPlan, listPlans } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { loadProject, toProject } from '../projects/repository.js';
import { getSubscriber, prepareSubscriber, type PreparedSubscriber } from '../subscribers/repository.js';
import { CreateSubscriberRequest } from '../subscribers/schema.js';
import type { Subscriber } from '../subscribers/schema.js';
import { DAY_MS } from '../subscriptions/lifecycle.js';
import { applyPlatformAccess, type PlatformAccessFollowUp } from '../subscriptions/platform-access.js';
import { addSubscriptionCreation, newSubscription, requireSubscribable } from '../subscriptions/creation.js';
import { planChangeTrigger, type Decision } from '../subscriptions/transition-decisions.js';
import { changeSubscriptionWith } from '../subscriptions/transitions.js';
import { PROVIDER_CHANGE_CREATED_ATTRIBUTE } from '../subscriptions/provider-change.js';
import type { Subscription } from '../subscriptions/schema.js';
import { ruleFor } from '../subscriptions/state-machine.js';
import { recordProviderPayment, recordProviderRefund } from './provider-payments.js';
import { newPayment } from './recording.js';
import { addPaymentOfNewSubscription, addProviderPaymentRef } from './writes.js';
import type { BillingReason, Payment } from './schema.js';

/**
 * A project's Stripe events mapped to the membership domain (DESIGN D15, D16, D22). The hook
 * (`shared/hooks/stripe.ts`) verifies the signature, keeps the receipt and calls {@link applyStripeEvent};
 * this module decides what an event means and runs the same use cases as everywhere else (subscription
 * creation with its counters, deadlines and tier limits; payments with their D15 transitions).
 *
 * | Stripe event | effect |
 * |---|---|
 * | `checkout.session.completed` | find or create the subscriber (by the Stripe customer), create the subscription (source `provider`): mode `subscription` → pending until `invoice.paid` (trialing when the plan has a trial); mode `payment` and paid → active with its succeeded payment; mode `payment` awaiting a delayed method (SEPA debit, bank transfer) → pending with a pending payment |
 * | `checkout.session.async_payment_succeeded` / `_failed` | that pending payment `succeeded` → activated, or `failed` (the subscription stays pending until its 23-hour expiry) |
 * | `invoice.paid` | payment `succeeded` → activated (first payment) or renewed; a zero-amount first invoice (a trial, a 100 % coupon) activates a pending subscription without a payment |
 * | `invoice.payment_failed` | payment `failed` → past_due (a renewal) |
 * | `customer.subscription.updated` | status canceled / unpaid / incomplete_expired / paused, `cancel_at_period_end`, `pause_collection`, a new price → the D15 transition |
 * | `customer.subscription.deleted` | canceled |
 * | `charge.refunded` | the payment refunded (one `payment.refunded`; nothing when already recorded) |
 *
 * Lookups: the Stripe customer, subscription and PaymentIntent ids lead to our subscriber, subscription
 * and payment through small items (`keys.providerCustomer`, `providerSubscription`, `providerPayment`)
 * written in the transactions that create them. Out of order (Stripe does not guarantee order): the
 * Stripe subscription's item keeps, per event family (subscription snapshots, invoices), the `created`
 * (unix SECONDS) of the last event applied to it after its creation (the checkout sets none: the first
 * invoice's events are created before the session completes), moved forward only (a conditional write in
 * the change's transaction); an older event of the family changes no subscription state. A transition D15 does not allow from the current status is ignored, not
 * an error. Echoes (D27): a change we made at Stripe first (`provider-change.ts`) is already in our state
 * when its `customer.subscription.*` event arrives, so the event finds nothing to change; the change also
 * stamps the link (`provider_change_created`), so a snapshot Stripe created before it is stale.
 */

/** The provider these events come from. */
const STRIPE: PaymentProvider = 'stripe';

/** How long (seconds after Stripe created it) an invoice of a subscription not created yet is refused so that Stripe sends it again after `checkout.session.completed`. */
const CHECKOUT_WAIT_SECONDS = 3600;

/** How long (seconds) the reference from a completed Checkout Session to its subscription is kept for the welcome page. */
const CHECKOUT_SESSION_REF_SECONDS = 30 * 24 * 3600;

/** What an event did: applied, or ignored with the reason (logged by the hook; the event is acknowledged). */
export type StripeEventOutcome = { applied: true } | { ignored: string };

/**
 * Thrown when an event arrived before the event it depends on (an invoice of a subscription whose
 * `checkout.session.completed` has not been applied yet, within {@link CHECKOUT_WAIT_SECONDS}): the hook
 * answers 5xx, stores no receipt, and Stripe sends it again later.
 */
export class StripeEventNotReady extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StripeEventNotReady';
  }
}

/** Problems that mean "this event does not apply" rather than "try again" (a gone plan, a banned subscriber, a tier limit…). */
const NOT_APPLICABLE = new Set(['NOT_FOUND', 'CONFLICT', 'VALIDATION_FAILED', 'TIER_LIMIT_REACHED']);

const applied: StripeEventOutcome = { applied: true };
const ignored = (reason: string): StripeEventOutcome => ({ ignored: reason });

/** The id of an expandable Stripe field (an id or an expanded object), or null. */
function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.id;
}

/**
 * Applies one verified Stripe event of project `projectId` as `principal` (the hook's principal of the
 * project's team). `event.created` is unix SECONDS. Returns what it did; throws {@link StripeEventNotReady}
 * (send again later) and store failures (the hook answers 5xx). Problems of the domain that mean the
 * event does not apply (NOT_FOUND, CONFLICT, VALIDATION_FAILED, TIER_LIMIT_REACHED) become an ignored
 * outcome naming them.
 */
export async function applyStripeEvent(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, event: Stripe.Event): Promise<StripeEventOutcome> {
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
    if (error instanceof ProblemError && NOT_APPLICABLE.has(error.code)) return ignored(`${error.code}: ${error.message}`);
    throw error;
  }
}

/** What every mapping needs: the runtime, the principal, the project and the event's `created` (unix seconds). */
interface EventContext {
  runtime: UnitOfWorkRuntime;
  principal: Principal;
  projectId: string;
  created: number;
}

/**
 * The families of events ordered against each other: a `customer.subscription.*` event carries the whole
 * subscription (a newer one supersedes an older one), an invoice event one payment attempt (a newer
 * attempt supersedes an older one). Each family keeps its own last applied `created`, so an older
 * snapshot of one family never undoes a newer one of the same family, and an invoice never hides a
 * cancellation the subscriber asked for a second earlier (or the other way round).
 */
type EventFamily = 'subscription' | 'invoice';

/** The link item's attribute holding a family's last applied event `created` (unix seconds). */
const LAST_APPLIED: Record<EventFamily, string> = { subscription: 'last_subscription_event_created', invoice: 'last_invoice_event_created' };

/** Our subscription linked to a Stripe subscription, and per event family the `created` (unix seconds) of the last event applied to it (0: none). */
interface SubscriptionLink {
  stripeSubscriptionId: string;
  subscriptionId: string;
  lastApplied: Record<EventFamily, number>;
}

/** The link of a Stripe subscription (strongly consistent), or null when none of ours has that id. */
async function linkOf(context: EventContext, stripeSubscriptionId: string): Promise<SubscriptionLink | null> {
  const item = await context.runtime.store.get(keys.providerSubscription(context.principal.teamId, context.projectId, STRIPE, stripeSubscriptionId));
  if (!item) return null;
  // Our own provider-first change supersedes every subscription snapshot Stripe created before it (D27).
  const ownChange = Number(item[PROVIDER_CHANGE_CREATED_ATTRIBUTE] ?? 0);
  return {
    stripeSubscriptionId,
    subscriptionId: item.subscription_id as string,
    lastApplied: { subscription: Math.max(Number(item[LAST_APPLIED.subscription] ?? 0), ownChange), invoice: Number(item[LAST_APPLIED.invoice] ?? 0) },
  };
}

/** True when the event is not older than the last one of its family applied to the link's subscription (same second counts as not older). */
function isFresh(context: EventContext, link: SubscriptionLink, family: EventFamily): boolean {
  return context.created >= link.lastApplied[family];
}

/**
 * Adds to `tx` moving the link's last applied event to this event's `created`, conditional on it not
 * having moved past it meanwhile (a newer event applied concurrently: a lost race, re-read and retried).
 */
function markApplied(tx: Transaction, context: EventContext, link: SubscriptionLink, family: EventFamily): void {
  tx.update(keys.providerSubscription(context.principal.teamId, context.projectId, STRIPE, link.stripeSubscriptionId), {
    expression: 'SET #last = :created',
    condition: 'attribute_exists(pk) AND (attribute_not_exists(#last) OR #last <= :created)',
    names: { '#last': LAST_APPLIED[family] },
    values: { ':created': context.created },
  });
}

// ---------------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------------

/** Plans of the project read per page while looking for a synced price. */
const PLAN_PAGE = 100;

/** The project's plan synced to Stripe with price `priceId` (`provider_price_id`), or null. Pages through the project's plans. */
async function planOfPrice(context: EventContext, priceId: string): Promise<Plan | null> {
  let cursor: string | undefined;
  do {
    const page = await listPlans(context.runtime.store, context.principal, context.projectId, { limit: PLAN_PAGE, cursor });
    const plan = page.data.find((candidate) => candidate.payment_provider === STRIPE && candidate.provider_price_id === priceId);
    if (plan) return plan;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return null;
}

/** The project's plan `planId` (our uuid, from Stripe metadata `plan_id`), or null when it is not one. */
async function planOfId(context: EventContext, planId: string): Promise<Plan | null> {
  try {
    const plan = await getPlan(context.runtime.store, context.principal, planId);
    return plan.project_id === context.projectId ? plan : null;
  } catch (error) {
    if (error instanceof ProblemError && (error.code === 'NOT_FOUND' || error.code === 'VALIDATION_FAILED')) return null;
    throw error;
  }
}

/** The plan named by `metadata.plan_id`, else the plan synced with one of `priceIds`, else null. */
async function planOf(context: EventContext, metadata: Stripe.Metadata | null | undefined, priceIds: readonly string[]): Promise<Plan | null> {
  const planId = metadata?.plan_id;
  if (planId) return planOfId(context, planId);
  for (const priceId of priceIds) {
    const plan = await planOfPrice(context, priceId);
    if (plan) return plan;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------
// checkout.session.completed
// ---------------------------------------------------------------------------------------------------

/** The subscriber fields a Checkout Session gives (invalid ones dropped): e-mail, name, the Stripe customer. */
function subscriberInput(session: Stripe.Checkout.Session, customerId: string | null): CreateSubscriberRequest {
  const wanted = { email: session.customer_details?.email ?? undefined, display_name: session.customer_details?.name ?? undefined, provider_customer_id: customerId ?? undefined };
  const parsed = CreateSubscriberRequest.safeParse(wanted);
  if (parsed.success) return parsed.data;
  const fallback = CreateSubscriberRequest.safeParse({ provider_customer_id: customerId ?? undefined });
  return fallback.success ? fallback.data : { consent: false };
}

/**
 * `checkout.session.completed` (mode `subscription` or `payment`): finds the subscriber by the Stripe
 * customer (or creates one with the customer's e-mail and name, counted against the tier's limit), and
 * creates the subscription billed through Stripe on the plan of `metadata.plan_id` (else the plan synced
 * with a line item's price, when the event carries line items): mode `subscription` → `pending` (its
 * first invoice's `invoice.paid` activates it), linked to the Stripe subscription; mode `payment` paid →
 * `active` with its succeeded payment (the PaymentIntent), in the same transaction. A session whose
 * Stripe subscription is linked already changes nothing.
 */
async function checkoutCompleted(context: EventContext, session: Stripe.Checkout.Session): Promise<StripeEventOutcome> {
  const { runtime, principal, projectId } = context;
  const teamId = principal.teamId;
  if (session.mode !== 'subscription' && session.mode !== 'payment') return ignored(`checkout mode ${session.mode} creates no subscription`);
  const stripeSubscriptionId = session.mode === 'subscription' ? idOf(session.subscription) : null;
  if (session.mode === 'subscription' && !stripeSubscriptionId) return ignored('the subscription-mode session names no subscription');
  if (stripeSubscriptionId && (await linkOf(context, stripeSubscriptionId))) return ignored(`Stripe subscription ${stripeSubscriptionId} is linked already`);
  const priceIds = (session.line_items?.data ?? []).flatMap((item) => (item.price ? [item.price.id] : []));
  const plan = await planOf(context, session.metadata, priceIds);
  if (!plan) return ignored('no plan: the session has no metadata.plan_id of this project and no line item with a synced price');

  const customerId = idOf(session.customer);
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const customerRef = customerId ? await runtime.store.get(keys.providerCustomer(teamId, projectId, STRIPE, customerId)) : undefined;
  const existing: Subscriber | null = customerRef ? await getSubscriber(runtime.store, principal, customerRef.subscriber_id as string) : null;
  requireSubscribable(project, plan, existing);
  const prepared: PreparedSubscriber | undefined = existing ? undefined : await prepareSubscriber(runtime, principal, projectId, subscriberInput(session, customerId));
  const subscriber = existing ?? prepared!.subscriber;

  const paymentIntentId = session.mode === 'payment' ? idOf(session.payment_intent) : null;
  const charged = session.mode === 'payment' && paymentIntentId !== null && (session.amount_total ?? 0) > 0 && session.currency !== null;
  // A delayed payment method (SEPA debit, bank transfer…): the session completes unpaid and
  // checkout.session.async_payment_succeeded or _failed settles the PaymentIntent later.
  const paymentStatus: Payment['status'] | null = !charged ? null : session.payment_status === 'paid' ? 'succeeded' : session.payment_status === 'unpaid' ? 'pending' : null;
  // A recurring plan with a trial starts trialing: its first invoice (zero, or the first charge after
  // the trial) settles nothing before the trial ends. Otherwise the first invoice activates it.
  const trialDays = session.mode === 'subscription' && plan.interval !== 'one_time' ? plan.trial_days : 0;
  const nowMs = runtime.clock.nowMs();
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
    billing: { provider: STRIPE, firstPayment: paymentStatus === 'succeeded' || trialDays > 0 ? 'succeeded' : 'pending' },
  });
  const now = isoTime(nowMs);
  const payment: Payment | null = paymentStatus
    ? newPayment({
        id: newUuid(),
        subscription,
        amount: session.amount_total!,
        currency: session.currency!.toUpperCase(),
        status: paymentStatus,
        provider: STRIPE,
        providerPaymentId: paymentIntentId,
        billingReason: 'subscription_create',
        nowIso: now,
      })
    : null;
  let followUp: PlatformAccessFollowUp | null = null;
  await withinTierLimit(runtime, teamId, 'subscribers', () =>
    unitOfWork(runtime, teamId, async (tx) => {
      if (payment) {
        addPaymentOfNewSubscription(tx, teamId, payment, { before: null, after: subscription, subscriber, plan });
        addProviderPaymentRef(tx, teamId, payment, STRIPE, paymentIntentId!);
      }
      if (customerId && prepared) {
        tx.put(
          { ...keys.providerCustomer(teamId, projectId, STRIPE, customerId), entity: entity.providerCustomer, team_id: teamId, project_id: projectId, subscriber_id: subscriber.id },
          { condition: 'attribute_not_exists(pk)' },
        );
      }
      if (stripeSubscriptionId) {
        tx.put(
          // No last applied event yet: Stripe creates the first invoice's events BEFORE the session completes,
          // so they must still apply after the creation (the creation orders nothing).
          {
            ...keys.providerSubscription(teamId, projectId, STRIPE, stripeSubscriptionId),
            entity: entity.providerSubscription,
            team_id: teamId,
            project_id: projectId,
            subscription_id: subscription.id,
          },
          { condition: 'attribute_not_exists(pk)' },
        );
      }
      // The join page's welcome page (DESIGN D26) finds the subscription by the session id Stripe sends the buyer back with.
      tx.put({
        ...keys.checkoutSession(projectId, session.id),
        entity: entity.checkoutSession,
        team_id: teamId,
        project_id: projectId,
        subscription_id: subscription.id,
        expires_at: Math.floor(nowMs / 1000) + CHECKOUT_SESSION_REF_SECONDS,
      });
      ({ followUp } = await addSubscriptionCreation(tx, runtime, principal, {
        subscription,
        subscriber,
        plan,
        accessCode: null,
        newSubscriber: prepared,
        providerSubscriptionId: stripeSubscriptionId,
      }));
    }),
  );
  await applyPlatformAccess(runtime, teamId, followUp);
  return applied;
}

// ---------------------------------------------------------------------------------------------------
// invoice.paid / invoice.payment_failed
// ---------------------------------------------------------------------------------------------------

/** Our billing reason of a Stripe invoice's `billing_reason`: `subscription_create` stays, `manual` stays, every other (cycle, update, threshold…) is a renewal. */
export function billingReasonOf(reason: Stripe.Invoice.BillingReason | null): BillingReason {
  if (reason === 'subscription_create') return 'subscription_create';
  if (reason === 'manual') return 'manual';
  return 'renewal';
}

/** The PaymentIntent of an invoice (`invoice.payments`, the first with one), or null when the event carries none. */
function paymentIntentOf(invoice: Stripe.Invoice): string | null {
  for (const entry of invoice.payments?.data ?? []) {
    const id = idOf(entry.payment?.payment_intent);
    if (id) return id;
  }
  return null;
}

/**
 * `invoice.paid` (`succeeded`, `amount_paid`) and `invoice.payment_failed` (`failed`, `amount_due`) of a
 * linked Stripe subscription (`invoice.parent.subscription_details.subscription`): the payment (provider
 * payment id = the PaymentIntent, else the invoice id when the event carries no payments; currency upper
 * case; billing reason from the invoice's) and the D15 transition it drives. An event older than the last
 * one applied records the payment but moves no state. An invoice of a Stripe subscription not linked yet:
 * its first invoice within {@link CHECKOUT_WAIT_SECONDS} is sent again later ({@link StripeEventNotReady}),
 * any other is ignored (a subscription not created through this project's checkout).
 */
async function invoiceSettled(context: EventContext, invoice: Stripe.Invoice, status: 'succeeded' | 'failed'): Promise<StripeEventOutcome> {
  const stripeSubscriptionId = idOf(invoice.parent?.subscription_details?.subscription);
  if (!stripeSubscriptionId) return ignored('the invoice is not a subscription\u2019s');
  const link = await linkOf(context, stripeSubscriptionId);
  if (!link) {
    const ageSeconds = Math.floor(context.runtime.clock.nowMs() / 1000) - context.created;
    if (invoice.billing_reason === 'subscription_create' && ageSeconds < CHECKOUT_WAIT_SECONDS) {
      throw new StripeEventNotReady(`Stripe subscription ${stripeSubscriptionId} is not linked yet (its checkout.session.completed comes first)`);
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
async function zeroAmountInvoice(context: EventContext, link: SubscriptionLink, invoice: Stripe.Invoice, status: 'succeeded' | 'failed', fresh: boolean): Promise<StripeEventOutcome> {
  if (status !== 'succeeded' || invoice.billing_reason !== 'subscription_create' || !fresh) return ignored('the invoice is for a zero amount: no payment to record');
  let skipped: string | null = null;
  await changeSubscriptionWith(
    context.runtime,
    context.principal,
    link.subscriptionId,
    (subscription) => {
      if (subscription.status !== 'pending') skipped = `a zero-amount first invoice changes nothing for a ${subscription.status} subscription`;
      return skipped ? null : { trigger: 'payment_succeeded' };
    },
    (tx) => markApplied(tx, context, link, 'invoice'),
  );
  return skipped ? ignored(skipped) : applied;
}

// ---------------------------------------------------------------------------------------------------
// checkout.session.async_payment_succeeded / checkout.session.async_payment_failed
// ---------------------------------------------------------------------------------------------------

/**
 * `checkout.session.async_payment_succeeded` / `_failed` (mode `payment`, a delayed payment method): the
 * pending payment `checkout.session.completed` recorded for the session's PaymentIntent becomes
 * `succeeded` (the pending subscription is activated, D15) or `failed` (the subscription stays pending
 * and expires after 23 hours unless paid). Arriving before its `checkout.session.completed` (within
 * {@link CHECKOUT_WAIT_SECONDS}) it is sent again later ({@link StripeEventNotReady}); a session of no
 * payment of this project is ignored.
 */
async function checkoutPaymentSettled(context: EventContext, session: Stripe.Checkout.Session, status: 'succeeded' | 'failed'): Promise<StripeEventOutcome> {
  const paymentIntentId = idOf(session.payment_intent);
  if (session.mode !== 'payment' || !paymentIntentId) return ignored('only a payment-mode session with a PaymentIntent settles a payment');
  const ref = await context.runtime.store.get(keys.providerPayment(context.principal.teamId, context.projectId, STRIPE, paymentIntentId));
  if (!ref) {
    const ageSeconds = Math.floor(context.runtime.clock.nowMs() / 1000) - context.created;
    if (ageSeconds < CHECKOUT_WAIT_SECONDS) throw new StripeEventNotReady(`no payment has PaymentIntent ${paymentIntentId} yet (its checkout.session.completed comes first)`);
    return ignored(`no payment of this project has PaymentIntent ${paymentIntentId}`);
  }
  const outcome = await recordProviderPayment(context.runtime, context.principal, {
    subscriptionId: ref.subscription_id as string,
    projectId: context.projectId,
    provider: STRIPE,
    providerPaymentId: paymentIntentId,
    status,
    amount: session.amount_total ?? 0,
    currency: (session.currency ?? '').toUpperCase(),
    billingReason: 'subscription_create',
    drivesSubscription: true,
  });
  if (!outcome.changed) return ignored(`payment ${outcome.payment.id} is ${outcome.payment.status} already`);
  return applied;
}

// ---------------------------------------------------------------------------------------------------
// customer.subscription.updated / customer.subscription.deleted
// ---------------------------------------------------------------------------------------------------

/**
 * The D15 change a Stripe subscription's state asks of ours (`subscription` on `plan`), or null when they
 * agree. Pure. In order: deleted or status `canceled` → cancel; `incomplete_expired` → incomplete_expired;
 * `unpaid` → retries_exhausted; paused (status `paused` or `pause_collection` set) → pause, and no longer
 * paused → resume; `cancel_at_period_end` (or a `cancel_at`) → cancel_at_period_end, and withdrawn →
 * resume; a price synced to another plan of the project (`targetPlan`) → upgrade or downgrade. One change
 * per event (Stripe sends one event per change).
 */
export function stripeSubscriptionDecision(stripeSubscription: Stripe.Subscription, deleted: boolean, subscription: Subscription, plan: Plan, targetPlan: Plan | null): Decision | null {
  const status = stripeSubscription.status;
  if (deleted || status === 'canceled') return subscription.status === 'canceled' ? null : { trigger: 'cancel', reason: stripeSubscription.cancellation_details?.reason ?? null };
  if (status === 'incomplete_expired') return { trigger: 'incomplete_expired' };
  if (status === 'unpaid') return subscription.status === 'unpaid' ? null : { trigger: 'retries_exhausted' };
  const paused = status === 'paused' || stripeSubscription.pause_collection !== null;
  if (paused !== (subscription.status === 'paused')) return { trigger: paused ? 'pause' : 'resume' };
  const cancelling = stripeSubscription.cancel_at_period_end || stripeSubscription.cancel_at !== null;
  if (cancelling !== (subscription.status === 'pending_cancellation')) {
    return cancelling ? { trigger: 'cancel_at_period_end', reason: stripeSubscription.cancellation_details?.reason ?? null } : { trigger: 'resume' };
  }
  if (targetPlan && targetPlan.id !== plan.id) return { trigger: planChangeTrigger(plan, targetPlan), newPlan: targetPlan };
  return null;
}

/**
 * `customer.subscription.updated` and `.deleted` of a linked Stripe subscription: the change
 * {@link stripeSubscriptionDecision} names, applied through the subscription change path (its one
 * event, member access, counters and deadline) with the link's last applied event moved forward in the
 * same transaction. Ignored: an unlinked subscription, an event older than the last applied one, a
 * change D15 does not allow from the current status, nothing to change.
 */
async function subscriptionChanged(context: EventContext, stripeSubscription: Stripe.Subscription, deleted: boolean): Promise<StripeEventOutcome> {
  const link = await linkOf(context, stripeSubscription.id);
  if (!link) return ignored(`Stripe subscription ${stripeSubscription.id} is not linked to a subscription of this project`);
  if (!isFresh(context, link, 'subscription'))
    return ignored(`older (created ${context.created}) than the last customer.subscription event applied to subscription ${link.subscriptionId} (${link.lastApplied.subscription})`);
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
      else if (!ruleFor(subscription.status, decision.trigger)) skipped = `D15 allows no ${decision.trigger} from ${subscription.status}`;
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
