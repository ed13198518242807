import { discountAfter } from '../coupons/decisions.js';
import type { Discount } from '../coupons/discount.js';
import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { scheduleDeadline } from '../../deadlines/deadline.js';
import { ProblemError, type FieldError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import {
  countLivePlanOfSubscriber,
  countSubscriptionStarted,
  putNewSubscription,
  writeSubscriptionIndex,
} from '../../store/subscriptions/writes.js';
import { trialUseStore } from '../../store/subscriptions/trials.js';
import { subscriberStore } from '../../store/subscribers.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { getPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { loadProject, toProject } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import type { AccessCode } from '../access-codes/schema.js';
import { parseStoredSubscriber } from '../subscribers/record.js';
import {
  getSubscriber,
  isEmptySetChange,
  livePlanAttribute,
  writeSubscriberAccess,
  type PreparedSubscriber,
} from '../subscribers/repository.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import type { Subscriber } from '../subscribers/schema.js';
import { nextDueTrigger, periodEnd as periodEndOf } from './lifecycle.js';
import { DAY_MS } from '../../clock.js';
import { prepareAccessChange } from './member-access.js';
import { applyPlatformAccess, type PlatformAccessFollowUp } from './platform-access.js';
import type { CreateSubscriptionRequest, Subscription, SubscriptionSource } from './schema.js';
import { hasAccess, initialStatus } from './state-machine.js';
import { IMPORTED_EVENTS, type ImportedStatus } from './imported.js';
import { accessSetChange } from './transition-decisions.js';
import { writeSubscriptionMetrics } from '../metrics/writes.js';
import { deadlineOf, type AlongsideWrites } from './writes.js';

/** Creating a subscription (DESIGN D15 "(new)" row): the pure new subscription, and the one transaction writing it. */

const invalid = (errors: FieldError[]) =>
  new ProblemError(
    'VALIDATION_FAILED',
    `The subscription\u2019s dates are inconsistent: ${errors.map((error) => `${error.path} ${error.message}`).join('; ')}.`,
    { errors },
  );

/** Tolerated clock skew for a `starts_at` "now" sent by a client, in milliseconds. */
const START_SKEW_MS = 5 * 60 * 1000;

/**
 * Refuses a new subscription (DESIGN D15 "(new)" row) of `subscriber` (null: a subscriber created in the same
 * transaction) to `plan` in `project`; `imported`: an existing member brought from a provider keeps an inactive plan.
 * Errors: NOT_FOUND (subscriber or plan of another project); CONFLICT (archived project, inactive plan, banned
 * subscriber).
 */
export function requireSubscribable(project: Project, plan: Plan, subscriber: Subscriber | null, imported = false) {
  if (subscriber && subscriber.project_id !== project.id)
    throw new ProblemError('NOT_FOUND', `No subscriber ${subscriber.id} in project ${project.id}.`);
  if (plan.project_id !== project.id)
    throw new ProblemError('NOT_FOUND', `No plan ${plan.id} in project ${project.id}.`);
  if (project.status !== 'active')
    throw new ProblemError(
      'CONFLICT',
      `Project ${project.id} is ${project.status}: no new subscriptions; unarchive it first.`,
    );
  if (plan.status !== 'active' && !imported)
    throw new ProblemError(
      'CONFLICT',
      `Plan ${plan.id} is inactive: it takes no new subscriptions; activate it first.`,
    );
  if (subscriber?.status === 'banned')
    throw new ProblemError(
      'CONFLICT',
      `Subscriber ${subscriber.id} is banned: no new subscriptions; unban them first.`,
    );
}

/** The facts a new subscription is built from (see {@link newSubscription}); times are epoch MILLISECONDS. */
export interface NewSubscriptionFacts {
  projectId: string;
  subscriberId: string;
  plan: Plan;
  source: SubscriptionSource;
  nowMs: number;
  /** When access starts (≥ nowMs; later = scheduled). */
  startMs: number;
  /** End of the trial, or null without one (then it starts trialing). */
  trialEndMs: number | null;
  /** End of a fixed term, or null for an open-ended subscription. */
  endsAtMs: number | null;
  /**
   * Billed through a payment provider (source `provider`): its first payment decides pending / incomplete (D15, D16).
   */
  billing?: SubscriptionBilling;
  /** A free join whose address is not confirmed yet: `incomplete` until it is (D26). */
  awaitingConfirmation?: boolean;
}

/**
 * A subscription billed through `provider`; the first payment's state: `pending` → pending, `failed` → incomplete,
 * `succeeded` → as without billing.
 */
interface SubscriptionBilling {
  provider: PaymentProvider;
  firstPayment: 'pending' | 'succeeded' | 'failed';
}

/**
 * A new subscription (DESIGN D15 "(new)" row) in the status {@link initialStatus} gives it — scheduled
 * (future start), trialing (a trial) or active — with its first period: the trial for trialing, one plan
 * period (cut at `ends_at`) for active, none for scheduled; with `billing`, pending or incomplete while the
 * first payment is pending or failed (source `provider`).
 */
export function newSubscription(facts: NewSubscriptionFacts): Subscription {
  const { plan, startMs, trialEndMs, endsAtMs, billing } = facts;
  const status = initialStatus({
    awaitingAsyncPayment: billing?.firstPayment === 'pending',
    firstPaymentFailed: billing?.firstPayment === 'failed',
    awaitingConfirmation: facts.awaitingConfirmation,
    startsInFuture: startMs > facts.nowMs,
    trial: trialEndMs !== null,
  });
  const now = isoTime(facts.nowMs);
  let periodStart: string | null = null;
  let periodEnd: string | null = null;
  if (status === 'trialing') {
    periodStart = isoTime(startMs);
    periodEnd = isoTime(trialEndMs!);
  } else if (status === 'active') {
    periodStart = isoTime(startMs);
    periodEnd = isoTime(periodEndOf(plan, startMs, endsAtMs));
  }
  return {
    id: newUuid(),
    project_id: facts.projectId,
    subscriber_id: facts.subscriberId,
    plan_id: plan.id,
    status,
    previous_status: null,
    has_access: hasAccess(status),
    source: billing ? 'provider' : facts.source,
    payment_provider: billing?.provider ?? null,
    price_version: plan.price_version,
    starts_at: isoTime(startMs),
    ends_at: endsAtMs === null ? null : isoTime(endsAtMs),
    trial_ends_at: trialEndMs === null ? null : isoTime(trialEndMs),
    current_period_start: periodStart,
    current_period_end: periodEnd,
    grace_period_end: null,
    discount: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_reason: null,
    invite_links: [],
    status_changed_at: now,
    created_at: now,
    updated_at: now,
  };
}

/** What {@link addSubscriptionCreation} writes: the new subscription, its subscriber and plan, the redeemed code. */
export interface SubscriptionCreation {
  subscription: Subscription;
  subscriber: Subscriber;
  plan: Plan;
  /** The access code redeemed for it (as after the redemption), carried by `subscription.created`; else null. */
  accessCode: AccessCode | null;
  /** A subscriber created in the same transaction (put with the live plan counter) instead of an existing one. */
  newSubscriber?: PreparedSubscriber;
  /** The provider's id of the subscription that bills it (Stripe `sub_...`), kept for provider-first changes (D27). */
  providerSubscriptionId?: string | null;
  /**
   * The e-mail address whose one trial per project (D33) a subscription with a trial uses up; default the subscriber's
   * stored address (a new subscriber's when consented). None: no trial is recorded.
   */
  trialEmail?: string | null;
  /** Imported as the provider has it (D34): emits `IMPORTED_EVENTS[status]` instead of `subscription.created`. */
  imported?: boolean;
}

/** The address a trial of `creation` is recorded for (see {@link SubscriptionCreation.trialEmail}), or null. */
async function trialEmailOf(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  creation: SubscriptionCreation,
): Promise<string | null> {
  if (creation.trialEmail !== undefined) return creation.trialEmail;
  const { subscriber } = creation;
  if (creation.newSubscriber) return subscriber.email ?? null;
  const item = await subscriberStore.read(runtime.store, teamId, subscriber.project_id, subscriber.id);
  return (item ? parseStoredSubscriber(item).email : null) ?? null;
}

/**
 * Adds a subscription's creation to `tx` (D15 "(new)"; the one creation path): item, index, access sets,
 * `live_subscription_count` + 1 on project and plan, the live plan counter, `subscription.created` (an import's event
 * instead, `imported.ts`), access events, and for a trial the use of the address's one trial in the project (D33).
 * CONFLICT: inactive project/plan, missing or banned subscriber. Returns it (with `invite_links`) and platform calls.
 */
export async function addSubscriptionCreation(
  tx: Transaction,
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  creation: SubscriptionCreation,
): Promise<AddedSubscription> {
  const teamId = principal.teamId;
  const { subscriber, plan } = creation;
  const access = creation.subscription.has_access
    ? await prepareAccessChange(runtime, principal, {
        subscriber,
        plan,
        before: null,
        after: creation.subscription,
        newSubscriber: creation.newSubscriber !== undefined,
      })
    : null;
  const subscription = access?.subscription ?? creation.subscription;
  const projectId = subscription.project_id;
  const due = nextDueTrigger(subscription);
  putNewSubscription(tx, teamId, subscription, due ? isoTime(due.atMs) : null, creation.providerSubscriptionId ?? null);
  writeSubscriptionIndex(tx, teamId, subscription);
  writeSubscriptionMetrics(tx, teamId, null, { subscription, plan });
  countSubscriptionStarted(tx, teamId, projectId, plan.id, {
    projectInactive: () =>
      new ProblemError('CONFLICT', `Project ${projectId} was archived or deleted meanwhile: no new subscriptions.`),
    planInactive: () =>
      new ProblemError('CONFLICT', `Plan ${plan.id} was deactivated or deleted meanwhile: no new subscriptions.`),
    closedPlan: creation.imported === true,
  });
  if (due) scheduleDeadline(tx, deadlineOf(teamId, subscription, due));
  const trialEmail = subscription.trial_ends_at === null ? null : await trialEmailOf(runtime, teamId, creation);
  if (trialEmail) trialUseStore.record(tx, teamId, projectId, trialEmail, subscription.id, subscription.created_at);
  tx.emit({
    type: creation.imported ? IMPORTED_EVENTS[subscription.status as ImportedStatus] : 'subscription.created',
    projectId,
    data: { subscription, subscriber, plan, access_code: creation.accessCode },
  });
  const accessSets = accessSetChange(null, subscription);
  if (creation.newSubscriber) {
    // One write of the new subscriber's access summary: its creation and this subscription's sets.
    creation.newSubscriber.write(tx, {
      attributes: { [livePlanAttribute(plan.id)]: 1 },
      projectGuarded: true,
      accessSets,
    });
  } else {
    if (!isEmptySetChange(accessSets))
      writeSubscriberAccess(tx, teamId, projectId, subscriber.id, { sets: accessSets });
    countLivePlanOfSubscriber(
      tx,
      teamId,
      projectId,
      subscriber.id,
      plan.id,
      () =>
        new ProblemError(
          'CONFLICT',
          `Subscriber ${subscriber.id} was banned or deleted meanwhile: no new subscriptions.`,
        ),
    );
  }
  return { subscription, followUp: access ? access.write(tx) : null };
}

/**
 * What {@link addSubscriptionCreation} added: the subscription as written, and the platform calls to make after the
 * commit.
 */
export interface AddedSubscription {
  subscription: Subscription;
  followUp: PlatformAccessFollowUp | null;
}

/**
 * Creates a subscription (`POST /v1/projects/{project_id}/subscriptions`, D15 "(new)"): `scheduled`, `trialing` or
 * `active`; one_time `ends_at` = start + `access_days`. `extension`: provider `billing` (first payment decides status)
 * and `alongside` writes (first). Errors: NOT_FOUND; VALIDATION_FAILED (dates, trial); CONFLICT (archived, inactive,
 * banned).
 */
export async function createSubscription(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: CreateSubscriptionRequest,
  extension: SubscriptionCreationExtension = {},
): Promise<Subscription> {
  const teamId = principal.teamId;
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const [subscriber, plan] = await Promise.all([
    getSubscriber(runtime.store, principal, input.subscriber_id),
    getPlan(runtime.store, principal, input.plan_id),
  ]);
  requireSubscribable(project, plan, subscriber);

  const nowMs = runtime.clock.nowMs();
  const errors: FieldError[] = [];
  const requestedStartMs = input.starts_at ? Date.parse(input.starts_at) : nowMs;
  if (requestedStartMs < nowMs - START_SKEW_MS) errors.push({ path: 'starts_at', message: 'must not be in the past' });
  const startMs = Math.max(requestedStartMs, nowMs);
  if (input.trial && plan.trial_days === 0)
    errors.push({ path: 'trial', message: `plan ${plan.id} has no trial (trial_days 0)` });
  const trialEndMs = input.trial && plan.trial_days > 0 ? startMs + plan.trial_days * DAY_MS : null;
  const endsAtMs = input.ends_at
    ? Date.parse(input.ends_at)
    : plan.interval === 'one_time'
      ? startMs + (plan.access_days ?? 1) * DAY_MS
      : null;
  if (endsAtMs !== null && endsAtMs <= startMs) errors.push({ path: 'ends_at', message: 'must be after starts_at' });
  if (endsAtMs !== null && trialEndMs !== null && endsAtMs <= trialEndMs)
    errors.push({ path: 'ends_at', message: 'must be after the trial ends' });
  if (errors.length) throw invalid(errors);

  const source: SubscriptionSource = plan.amount === 0 ? 'free_plan' : 'creator_grant';
  const subscription = newSubscription({
    projectId,
    subscriberId: subscriber.id,
    plan,
    source,
    nowMs,
    startMs,
    trialEndMs,
    endsAtMs,
    billing: extension.billing,
  });
  if (extension.discount)
    subscription.discount = discountAfter(
      extension.discount,
      subscription.current_period_start,
      subscription.current_period_end,
    );
  const added = await unitOfWork(runtime, teamId, async (tx) => {
    await extension.alongside?.(tx, { before: null, after: subscription, subscriber, plan });
    return addSubscriptionCreation(tx, runtime, principal, { subscription, subscriber, plan, accessCode: null });
  });
  await applyPlatformAccess(runtime, teamId, added.followUp);
  return added.subscription;
}

/** What {@link createSubscription} takes from another use case creating a subscription (see there). */
export interface SubscriptionCreationExtension {
  billing?: SubscriptionBilling;
  alongside?: AlongsideWrites;
  /** The coupon's discount the subscription starts with (D33), or none. */
  discount?: Discount;
}
