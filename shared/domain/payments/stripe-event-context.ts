import type Stripe from 'stripe';
import type { Principal } from '../../auth/principal.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { ProblemError } from '../../errors.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { readProviderSubscriptionLink } from '../../store/payments/reads.js';
import { markProviderEventApplied } from '../../store/payments/writes.js';
import { recordParser } from '../../store/records.js';
import { type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { getPlan, listPlans } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { PROVIDER_CHANGE_CREATED_ATTRIBUTE } from '../subscriptions/provider-change.js';
import { Subscription } from '../subscriptions/schema.js';

/**
 * What every mapping of a project's Stripe events shares (DESIGN D16, D22; `stripe-events.ts` maps them):
 * the outcome and the not-ready signal, the event context, the link of a Stripe subscription to ours with
 * its per-family ordering (the last applied event's `created`, our own provider-first change's stamp), and
 * finding the plan an event names.
 */

/** The provider these events come from. */
export const STRIPE: PaymentProvider = 'stripe';

/**
 * How long (seconds after Stripe created it) an invoice of a subscription not created yet is refused so that Stripe
 * sends it again after `checkout.session.completed`.
 */
export const CHECKOUT_WAIT_SECONDS = 3600;

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

/** The outcome of an event that was applied. */
export const applied: StripeEventOutcome = { applied: true };
/** The outcome of an event that was ignored, with the `reason` the hook logs. */
export const ignored = (reason: string): StripeEventOutcome => ({ ignored: reason });

/** The id of an expandable Stripe field (an id or an expanded object), or null. */
export function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.id;
}

/** What every mapping needs: the runtime, the principal, the project and the event's `created` (unix seconds). */
export interface EventContext {
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
const LAST_APPLIED = {
  subscription: 'last_subscription_event_created',
  invoice: 'last_invoice_event_created',
} as const satisfies Record<EventFamily, string>;

/**
 * Our subscription linked to a Stripe subscription, and per event family the `created` (unix seconds) of the last event
 * applied to it (0: none).
 */
export interface SubscriptionLink {
  stripeSubscriptionId: string;
  subscriptionId: string;
  lastApplied: Record<EventFamily, number>;
}

/** A Stripe event's `created`, as a link item keeps it: unix SECONDS. */
const UnixSeconds = z.number().check(z.int(), z.nonnegative());

/**
 * A provider subscription's link item (`keys.providerSubscription`): our subscription's id and the
 * `created` of the last event applied per family and of our last provider-first change (each absent: none).
 */
const parseSubscriptionLink = recordParser(
  entity.providerSubscription,
  z.object({
    subscription_id: Subscription.shape.id,
    [LAST_APPLIED.subscription]: z.optional(UnixSeconds),
    [LAST_APPLIED.invoice]: z.optional(UnixSeconds),
    [PROVIDER_CHANGE_CREATED_ATTRIBUTE]: z.optional(UnixSeconds),
  }),
);

/** The link of a Stripe subscription (strongly consistent), or null when none of ours has that id. */
export async function linkOf(context: EventContext, stripeSubscriptionId: string): Promise<SubscriptionLink | null> {
  const item = await readProviderSubscriptionLink(
    context.runtime.store,
    context.principal.teamId,
    context.projectId,
    STRIPE,
    stripeSubscriptionId,
  );
  if (!item) return null;
  const link = parseSubscriptionLink(item);
  // Our own provider-first change supersedes every subscription snapshot Stripe created before it (D27); 0: none
  // applied.
  const ownChange = link[PROVIDER_CHANGE_CREATED_ATTRIBUTE] ?? 0;
  return {
    stripeSubscriptionId,
    subscriptionId: link.subscription_id,
    lastApplied: {
      subscription: Math.max(link[LAST_APPLIED.subscription] ?? 0, ownChange),
      invoice: link[LAST_APPLIED.invoice] ?? 0,
    },
  };
}

/**
 * True when the event is not older than the last one of its family applied to the link's subscription (same second
 * counts as not older).
 */
export function isFresh(context: EventContext, link: SubscriptionLink, family: EventFamily): boolean {
  return context.created >= link.lastApplied[family];
}

/**
 * Adds to `tx` moving the link's last applied event to this event's `created`, conditional on it not
 * having moved past it meanwhile (a newer event applied concurrently: a lost race, re-read and retried).
 */
export function markApplied(tx: Transaction, context: EventContext, link: SubscriptionLink, family: EventFamily): void {
  const applied = {
    provider: STRIPE,
    providerSubscriptionId: link.stripeSubscriptionId,
    attribute: LAST_APPLIED[family],
  };
  markProviderEventApplied(tx, context.principal.teamId, context.projectId, applied, context.created);
}

// ---------------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------------

/** Plans of the project read per page while looking for a synced price. */
const PLAN_PAGE = 100;

/**
 * The project's plan synced to Stripe with price `priceId` (`provider_price_id`), or null. Pages through the project's
 * plans.
 */
async function planOfPrice(context: EventContext, priceId: string): Promise<Plan | null> {
  let cursor: string | undefined;
  do {
    const page = await listPlans(context.runtime.store, context.principal, context.projectId, {
      limit: PLAN_PAGE,
      cursor,
    });
    const plan = page.data.find(
      (candidate) => candidate.payment_provider === STRIPE && candidate.provider_price_id === priceId,
    );
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
    if (error instanceof ProblemError && (error.code === 'NOT_FOUND' || error.code === 'VALIDATION_FAILED'))
      return null;
    throw error;
  }
}

/** The plan named by `metadata.plan_id`, else the plan synced with one of `priceIds`, else null. */
export async function planOf(
  context: EventContext,
  metadata: Stripe.Metadata | null | undefined,
  priceIds: readonly string[],
): Promise<Plan | null> {
  const planId = metadata?.plan_id;
  if (planId) return planOfId(context, planId);
  for (const priceId of priceIds) {
    const plan = await planOfPrice(context, priceId);
    if (plan) return plan;
  }
  return null;
}
