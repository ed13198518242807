import type Stripe from 'stripe';
import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';
import { isLostRace } from '../../store/optimistic.js';
import {
  readProviderCustomerSubscriber,
  readProviderLinks,
  readProviderSubscriptionLink,
} from '../../store/payments/reads.js';
import { putProviderCustomer, putProviderSubscriptionLink } from '../../store/payments/writes.js';
import type { ImportPageResult } from '../../store/imports.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { withinTierLimit } from '../billing/repository.js';
import { followStripeSubscription } from '../payments/stripe-follow.js';
import { STRIPE } from '../payments/stripe-event-context.js';
import { createPlan } from '../plans/creation.js';
import { getPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import type { Project } from '../projects/schema.js';
import { updateSubscriber } from '../subscribers/changes.js';
import { parseStoredSubscriber } from '../subscribers/record.js';
import { getSubscriber, loadSubscriber, prepareSubscriber, toSubscriber } from '../subscribers/repository.js';
import type { UpdateSubscriberRequest } from '../subscribers/schema.js';
import { addSubscriptionCreation, requireSubscribable } from '../subscriptions/creation.js';
import { importedSubscription } from '../subscriptions/imported.js';
import { applyPlatformAccess } from '../subscriptions/platform-access.js';
import { getSubscription } from '../subscriptions/queries.js';
import {
  importedPlanId,
  isInactivePrice,
  planItemOf,
  planOfPrice,
  stateOfSubscription,
  subscriberOfCustomer,
} from './mapping.js';
import type { StoredImport } from './record.js';
import type { ImportKind, ImportOutcome } from './schema.js';

/**
 * One Stripe object of an import page (DESIGN D34), mapped by its Stripe id so a repeated page or a re-run creates
 * nothing twice: a Price → a plan created `synced` with the Price's ids (or the plan `plan_mapping` names), a Customer
 * → a subscriber linked to the customer id, a Subscription → a subscription linked to the Stripe subscription, created
 * as Stripe has it (`subscriptions/imported.ts`); one already linked is brought up to date through the
 * `customer.subscription.updated` mapping of the Stripe hook. A dry run reads and decides, and writes nothing.
 */

/** The Stripe-id problems that mean an object does not import (it is skipped with the message). */
const NOT_APPLICABLE = new Set(['NOT_FOUND', 'CONFLICT', 'VALIDATION_FAILED', 'TIER_LIMIT_REACHED']);

/** What every object of a page needs: the runtime, the job's principal, the job, the project and its Stripe plans. */
export interface ImportContext {
  runtime: Runtime;
  principal: Principal;
  job: Pick<StoredImport, 'id' | 'plan_mapping' | 'dry_run'>;
  project: Project;
  /** The project's plans by the Stripe price they are synced with (grows as prices are imported). */
  plansByPrice: Map<string, Plan>;
  /** The project's plans `plan_mapping` names, by id (a missing id names no plan of the project). */
  mappedPlans: Map<string, Plan>;
  /** The inactive Stripe prices of the page that a subscription to import uses (their plans are made, closed). */
  inactivePricesInUse?: ReadonlySet<string>;
  /** The page's links to ours and linked subscribers, read at once (`readProviderLinks`); absent: read one by one. */
  links?: Awaited<ReturnType<typeof readProviderLinks>>;
  result: ImportPageResult;
}

/** Counts one object's outcome (and lists a skipped one with its reason). */
function tally(context: ImportContext, kind: ImportKind, outcome: ImportOutcome, stripeId: string, reason?: string) {
  const counts = (context.result.counts[kind] ??= {});
  counts[outcome] = (counts[outcome] ?? 0) + 1;
  if (outcome === 'skipped') context.result.skipped.push({ kind, stripe_id: stripeId, reason: reason ?? 'skipped' });
}

/** Runs `work`; a domain refusal of the object becomes its skip (returns the reason), other errors are thrown. */
async function refusalOf(work: () => Promise<void>): Promise<string | null> {
  try {
    await work();
    return null;
  } catch (error) {
    if (error instanceof ProblemError && NOT_APPLICABLE.has(error.code)) return `${error.code}: ${error.message}`;
    throw error;
  }
}

/** The plan a Stripe price joins: the creator's `plan_mapping`, else the plan synced with it; undefined: none. */
function planFor(context: ImportContext, priceId: string): Plan | undefined {
  const mapped = context.job.plan_mapping[priceId];
  return mapped ? context.mappedPlans.get(mapped) : context.plansByPrice.get(priceId);
}

/** Whether plan `planId` exists in the project (created by a concurrent worker of the same page). */
async function planExists(context: ImportContext, planId: string): Promise<boolean> {
  const plan = await getPlan(context.runtime.store, context.principal, planId).catch(() => null);
  return plan?.project_id === context.project.id;
}

/**
 * A Stripe Price → a plan (created synced), mapped to the creator's plan, unchanged, or skipped. An inactive price
 * makes a plan only when a subscription to import uses it (`inactivePricesInUse`), created `inactive` (its members keep
 * it, nobody new joins it); else it is skipped with `price_inactive`.
 */
export async function importPrice(context: ImportContext, price: Stripe.Price): Promise<void> {
  const mapped = context.job.plan_mapping[price.id];
  if (mapped) {
    if (planFor(context, price.id)) tally(context, 'plans', 'mapped', price.id);
    else tally(context, 'plans', 'skipped', price.id, `plan_mapping names ${mapped}, no plan of this project`);
    return;
  }
  if (context.plansByPrice.has(price.id)) return tally(context, 'plans', 'unchanged', price.id);
  const plan = planOfPrice(price);
  if ('skip' in plan) return tally(context, 'plans', 'skipped', price.id, plan.skip);
  const inactive = isInactivePrice(price);
  if (inactive && !context.inactivePricesInUse?.has(price.id))
    return tally(
      context,
      'plans',
      'skipped',
      price.id,
      'price_inactive: archived at Stripe, no subscription to import uses it',
    );
  if (context.job.dry_run) return tally(context, 'plans', 'created', price.id);
  const planId = importedPlanId(context.project.id, price.id);
  const request = inactive ? { ...plan.request, status: 'inactive' as const } : plan.request;
  const refused = await refusalOf(async () => {
    const created = await createPlan(context.runtime, context.principal, context.project.id, request, {
      imported: { planId, provider: STRIPE, productId: plan.productId, priceId: price.id },
    });
    context.plansByPrice.set(price.id, created);
  });
  // Another worker of the same page created it first (its conditional put won): it is imported.
  const createdMeanwhile = refused !== null && (await planExists(context, planId));
  if (createdMeanwhile) return tally(context, 'plans', 'unchanged', price.id);
  tally(context, 'plans', refused ? 'skipped' : 'created', price.id, refused ?? undefined);
}

/**
 * A Stripe Customer → a subscriber linked to it (consent false: D10); when linked already, its e-mail and name follow
 * Stripe's (`updated`; a field Stripe has not is kept) or it is `unchanged`; skipped when deleted or refused.
 */
export async function importCustomer(context: ImportContext, customer: Stripe.Customer): Promise<void> {
  const { runtime, principal, project } = context;
  const teamId = principal.teamId;
  if ((customer as { deleted?: boolean }).deleted)
    return tally(context, 'subscribers', 'skipped', customer.id, 'deleted at Stripe');
  const linked = context.links
    ? context.links.customers.get(customer.id)
    : await readProviderCustomerSubscriber(runtime.store, teamId, project.id, STRIPE, customer.id);
  if (linked) return refreshCustomer(context, customer, linked);
  if (context.job.dry_run) return tally(context, 'subscribers', 'created', customer.id);
  const refused = await refusalOf(async () => {
    const prepared = await prepareSubscriber(runtime, principal, project.id, subscriberOfCustomer(customer));
    await withinTierLimit(runtime, teamId, 'subscribers', () =>
      unitOfWork(runtime, teamId, (tx) => {
        prepared.write(tx);
        putProviderCustomer(tx, teamId, project.id, STRIPE, customer.id, prepared.subscriber.id);
      }),
    );
  }).catch((error: unknown) => {
    // Another worker of the same page linked the customer first: it is imported.
    if (isLostRace(error)) return 'linked meanwhile';
    throw error;
  });
  if (refused === 'linked meanwhile') return tally(context, 'subscribers', 'unchanged', customer.id);
  tally(context, 'subscribers', refused ? 'skipped' : 'created', customer.id, refused ?? undefined);
}

/** A linked customer whose e-mail or name changed at Stripe → its subscriber updated (`updateSubscriber`). */
async function refreshCustomer(context: ImportContext, customer: Stripe.Customer, subscriberId: string): Promise<void> {
  const { runtime, principal } = context;
  const wanted = subscriberOfCustomer(customer);
  const stored = parseStoredSubscriber(
    context.links?.subscribers.get(subscriberId) ?? (await loadSubscriber(runtime.store, principal, subscriberId)),
  );
  const change: UpdateSubscriberRequest = {};
  if (wanted.email && wanted.email !== stored.email) change.email = wanted.email;
  if (wanted.display_name && wanted.display_name !== stored.display_name) change.display_name = wanted.display_name;
  if (Object.keys(change).length === 0) return tally(context, 'subscribers', 'unchanged', customer.id);
  const refused = context.job.dry_run
    ? null
    : await refusalOf(async () => {
        await updateSubscriber(runtime, principal, subscriberId, change);
      });
  tally(context, 'subscribers', refused ? 'skipped' : 'updated', customer.id, refused ?? undefined);
}

/**
 * A Stripe Subscription → a subscription as Stripe has it, on the plan of its one item whose price has a plan (other
 * items, e.g. metered add-ons, are listed as ignored), or (linked already) brought up to date; skipped when it ended,
 * never started, has no plan or several (`multiple_plans`), or no imported customer.
 */
export async function importSubscription(
  context: ImportContext,
  stripeSubscription: Stripe.Subscription,
): Promise<void> {
  const { runtime, principal, project, job } = context;
  const teamId = principal.teamId;
  const id = stripeSubscription.id;
  const link = context.links ? null : await readProviderSubscriptionLink(runtime.store, teamId, project.id, STRIPE, id);
  const linkedId = context.links ? context.links.subscriptions.get(id) : link && String(link.subscription_id);
  if (linkedId) return updateLinked(context, stripeSubscription, linkedId);
  // A dry run created no plan: an active price that makes one counts, and an archived one when it is the only item
  // with a plan (the subscription uses it, as the prices page decides for real).
  const makesPlan = (price: Stripe.Price, archived: boolean) =>
    planFor(context, price.id) !== undefined ||
    (job.dry_run && (archived || !isInactivePrice(price)) && !('skip' in planOfPrice(price)));
  let planItem = planItemOf(stripeSubscription, (price) => makesPlan(price, false));
  if ('skip' in planItem && planItem.skip.startsWith('no_plan')) {
    // Several archived prices that could each make a plan make none (the prices page decides so): `multiple_plans`.
    const withArchived = planItemOf(
      stripeSubscription,
      (price) => makesPlan(price, true) || (isInactivePrice(price) && !('skip' in planOfPrice(price))),
    );
    if (job.dry_run || 'skip' in withArchived) planItem = withArchived;
  }
  const item = 'skip' in planItem ? stripeSubscription.items.data[0] : planItem.item;
  const state = stateOfSubscription(stripeSubscription, item);
  if ('skip' in state) return tally(context, 'subscriptions', 'skipped', id, state.skip);
  if ('skip' in planItem) return tally(context, 'subscriptions', 'skipped', id, planItem.skip);
  const ignoreItems = () => {
    context.result.ignoredItems += planItem.ignored.length;
    for (const { item, reason } of planItem.ignored)
      context.result.skipped.push({
        kind: 'subscriptions',
        stripe_id: item.id,
        reason: `item of ${id} ignored: ${reason}`,
      });
  };
  if (job.dry_run) {
    ignoreItems();
    return tally(context, 'subscriptions', 'created', id);
  }
  const plan = planFor(context, planItem.item.price.id)!;
  const customerId =
    typeof stripeSubscription.customer === 'string' ? stripeSubscription.customer : stripeSubscription.customer.id;
  const subscriberId = context.links
    ? context.links.customers.get(customerId)
    : await readProviderCustomerSubscriber(runtime.store, teamId, project.id, STRIPE, customerId);
  if (!subscriberId) return tally(context, 'subscriptions', 'skipped', id, `customer ${customerId} was not imported`);
  const read = context.links?.subscribers.get(subscriberId);
  const subscriber = read
    ? toSubscriber(read, { contact: true })
    : await getSubscriber(runtime.store, principal, subscriberId);
  let followUp = null;
  const refused = await refusalOf(async () => {
    requireSubscribable(project, plan, subscriber, true);
    const subscription = importedSubscription(
      { projectId: project.id, subscriberId, plan, provider: STRIPE, nowMs: runtime.clock.nowMs() },
      state,
    );
    ({ followUp } = await unitOfWork(runtime, teamId, async (tx) => {
      putProviderSubscriptionLink(tx, teamId, project.id, STRIPE, id, subscription.id);
      return addSubscriptionCreation(tx, runtime, principal, {
        subscription,
        subscriber,
        plan,
        accessCode: null,
        providerSubscriptionId: id,
        imported: true,
      });
    }));
  });
  await applyPlatformAccess(runtime, teamId, followUp);
  if (!refused) ignoreItems();
  tally(context, 'subscriptions', refused ? 'skipped' : 'created', id, refused ?? undefined);
}

/**
 * A linked subscription: Stripe's current state applied as the hook applies `customer.subscription.updated` (one D15
 * change per step, each with its event), until nothing is left to change. A dry run compares the statuses only.
 */
async function updateLinked(context: ImportContext, stripeSubscription: Stripe.Subscription, subscriptionId: string) {
  const { runtime, principal, project, job } = context;
  const id = stripeSubscription.id;
  if (job.dry_run) {
    const ours = await getSubscription(runtime.store, principal, subscriptionId);
    const planItem = planItemOf(stripeSubscription, (price) => !('skip' in planOfPrice(price)));
    const item = 'skip' in planItem ? stripeSubscription.items.data[0] : planItem.item;
    const state = stateOfSubscription(stripeSubscription, item);
    const wanted = 'skip' in state ? 'canceled' : state.status;
    return tally(
      context,
      'subscriptions',
      ours.status === wanted || (ours.status === 'canceled' && 'skip' in state) ? 'unchanged' : 'updated',
      id,
    );
  }
  const changed = await followStripeSubscription(
    runtime,
    principal,
    project.id,
    stripeSubscription,
    `import_${job.id}`,
  );
  tally(context, 'subscriptions', changed ? 'updated' : 'unchanged', id);
}
