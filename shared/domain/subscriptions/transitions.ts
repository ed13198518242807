import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import type { Deadline } from '../../deadlines/deadline.js';
import { ProblemError } from '../../errors.js';
import {
  checkSubscriptionUnchanged,
  countSubscriptionEnded,
  countSubscriptionMoved,
  markProviderChange,
  writeSubscriptionIndex,
  writeSubscriptionState,
} from '../../store/subscriptions/writes.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { getPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { getSubscriber, isEmptySetChange, writeSubscriberAccess } from '../subscribers/repository.js';
import { nextDueTrigger } from './lifecycle.js';
import { deadlineAtOf, toSubscription } from './records.js';
import { loadTransitionReads, type TransitionReads } from './access-facts.js';
import { prepareAccessChange, type PreparedAccessChange } from './member-access.js';
import { applyPlatformAccess, type PlatformAccessFollowUp } from './platform-access.js';
import { listSubscriptions, loadSubscription, type StoredSubscription } from './queries.js';
import type { CancelSubscriptionRequest, Subscription } from './schema.js';
import { ruleFor, type SubscriptionTrigger } from './state-machine.js';
import {
  accessSetChange,
  decidePlanChange,
  decideTransition,
  requireAllowed,
  type Decision,
} from './transition-decisions.js';
import { applyAtProvider, type ProviderChangeMade } from './provider-change.js';
import { writeSubscriptionMetrics } from '../metrics/writes.js';
import { writeDeadline, writeLivePlanCounters, type AlongsideWrites } from './writes.js';

/**
 * Transitions of subscriptions (DESIGN D14, D15): each loads the subscription and what it needs, decides
 * ({@link decideTransition}, pure) and commits one transaction conditional on the revision read; a lost
 * race reads and decides again ({@link retryOnLostRace}).
 */

/** Options of {@link runTransition}. */
interface TransitionOptions {
  /** The clock's deadline being applied (the transition removes or moves it conditionally). */
  fromDeadline?: Deadline;
  /** When it takes effect (epoch ms); default now. */
  atMs?: number;
  /** Another object's writes committed in the same transaction, added first (a payment, DESIGN D16). */
  alongside?: AlongsideWrites;
}

/**
 * Commits one transition of a loaded subscription: the new state (conditional on the revision read), its subscriber
 * index item ({@link writeSubscriptionIndex}), the access-summary sets when its access changes ({@link
 * accessSetChange}), the deadline change, the counters, the one `subscription.*` event and the member access events;
 * then makes the platform access calls (after the commit, never failing the transition). Returns the new subscription.
 * Throws CONFLICT (pair not allowed), ConditionFailedError / TransactionCanceledError on a lost race (the caller
 * retries), and ProblemErrors of conditions (a plan change to a plan deactivated meanwhile).
 */
export async function commitTransition(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  item: StoredSubscription,
  context: TransitionReads,
  decision: Decision,
  options: TransitionOptions,
): Promise<Subscription> {
  const teamId = principal.teamId;
  const before = toSubscription(item);
  const {
    next: moved,
    transition,
    planAfter,
    accessChanges,
    ends: ended,
  } = decideTransition(before, context.plan, decision, options.atMs ?? runtime.clock.nowMs());
  // Access starts or ends, or the plan changes (its roles): the platform is asked for a grant now (its invite links go
  // on the subscription).
  const access: PreparedAccessChange | null =
    accessChanges || decision.newPlan
      ? await prepareAccessChange(runtime, principal, {
          subscriber: context.subscriber,
          plan: planAfter,
          before,
          after: moved,
          facts: context.facts,
          previousPlan: decision.newPlan ? context.plan : undefined,
        })
      : null;
  const next = access?.subscription ?? moved;
  const due = nextDueTrigger(next);
  const dueAt = due ? isoTime(due.atMs) : null;
  let followUp: PlatformAccessFollowUp | null = null;
  // Returns the new subscription: what the operation answers, so the request's idempotency completion
  // stored in this transaction is final and needs no write of its own (D3).
  await unitOfWork(runtime, teamId, async (tx) => {
    await options.alongside?.(tx, { before, after: next, subscriber: context.subscriber, plan: planAfter });
    writeSubscriptionState(tx, teamId, item, next, dueAt);
    writeSubscriptionIndex(tx, teamId, next);
    writeSubscriptionMetrics(
      tx,
      teamId,
      { subscription: before, plan: context.plan },
      { subscription: next, plan: planAfter },
    );
    const accessSets = accessSetChange(before, next);
    if (!isEmptySetChange(accessSets))
      writeSubscriberAccess(tx, teamId, before.project_id, before.subscriber_id, { sets: accessSets });
    writeDeadline(tx, teamId, next, due, deadlineAtOf(item), options.fromDeadline);
    if (ended) countSubscriptionEnded(tx, teamId, before.project_id, before.plan_id);
    writeLivePlanCounters(tx, teamId, before, ended ? null : next);
    if (decision.newPlan) {
      const newPlanId = decision.newPlan.id;
      countSubscriptionMoved(
        tx,
        teamId,
        before.plan_id,
        newPlanId,
        () =>
          new ProblemError(
            'CONFLICT',
            `Plan ${newPlanId} was deactivated or deleted meanwhile: no subscription can move to it.`,
          ),
      );
    }
    const data = { subscription: next, subscriber: context.subscriber, plan: planAfter, access_code: null };
    tx.emit({
      type: transition.event,
      projectId: before.project_id,
      data: decision.newPlan ? { ...data, previous_plan: context.plan } : data,
    });
    if (access) followUp = access.write(tx);
    return next;
  });
  await applyPlatformAccess(runtime, teamId, followUp);
  return next;
}

/**
 * Runs one operation-driven transition (DESIGN D15): `decide` picks the trigger, the provider change comes first
 * ({@link applyAtProvider}, D27), a lost race decides again (`MAX_ATTEMPTS`). Errors: NOT_FOUND; CONFLICT (not allowed,
 * naming allowed actions, or kept changing); PROVIDER_UNAVAILABLE, VALIDATION_FAILED (provider; nothing changed).
 */
async function runTransition(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriptionId: string,
  decide: (subscription: Subscription, plan: Plan) => Promise<Decision> | Decision,
): Promise<Subscription> {
  // Once the provider agreed: the state it leads to, and the call made (not repeated for the same change).
  let agreed: {
    status: Subscription['status'];
    planId: string;
    trigger: Decision['trigger'];
    made: ProviderChangeMade;
  } | null = null;
  return retryOnLostRace(
    async () => {
      const item = await loadSubscription(runtime.store, principal, subscriptionId);
      const subscription = toSubscription(item);
      if (agreed && subscription.status === agreed.status && subscription.plan_id === agreed.planId)
        return subscription;
      const reads = await loadTransitionReads(runtime.store, principal, subscription);
      const decision = await decide(subscription, reads.plan);
      const nowMs = runtime.clock.nowMs();
      const planId = decision.newPlan?.id ?? subscription.plan_id;
      const made =
        agreed && agreed.trigger === decision.trigger && agreed.planId === planId
          ? agreed.made
          : await applyAtProvider(runtime, principal, item, subscription, decision);
      if (!made) return await commitTransition(runtime, principal, item, reads, decision, {});
      agreed = {
        status: decideTransition(subscription, reads.plan, decision, nowMs).next.status,
        planId,
        trigger: decision.trigger,
        made,
      };
      return await commitTransition(runtime, principal, item, reads, decision, {
        alongside: (tx) =>
          markProviderChange(tx, principal.teamId, subscription.project_id, made, Math.floor(nowMs / 1000)),
      });
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

/**
 * One attempt of a subscription change committed with another use case's writes (`alongside`) in ONE transaction (D14,
 * D16); `decide` null = unchanged but revision-checked. Returns the subscription. Errors: NOT_FOUND; CONFLICT (pair not
 * allowed); a lost race ({@link isLostRace}) is thrown for the caller to retry.
 */
export async function changeSubscriptionWith(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriptionId: string,
  decide: (subscription: Subscription, plan: Plan) => Decision | null,
  alongside: AlongsideWrites,
): Promise<Subscription> {
  const item = await loadSubscription(runtime.store, principal, subscriptionId);
  const subscription = toSubscription(item);
  const reads = await loadTransitionReads(runtime.store, principal, subscription);
  const { plan, subscriber } = reads;
  const decision = decide(subscription, plan);
  if (decision) {
    requireAllowed(subscription, decision.trigger);
    return commitTransition(runtime, principal, item, reads, decision, { alongside });
  }
  const teamId = principal.teamId;
  await unitOfWork(runtime, teamId, async (tx) => {
    await alongside(tx, { before: subscription, after: subscription, subscriber, plan });
    checkSubscriptionUnchanged(tx, teamId, subscription.id, item);
  });
  return subscription;
}

/**
 * Cancels a subscription (`POST /v1/subscriptions/{id}/cancel`): at period end by default (trialing or
 * active → pending_cancellation, `subscription.cancellation_scheduled`; the clock cancels it at
 * `current_period_end`), or at once with `at_period_end: false` (any non-terminal status → canceled,
 * `subscription.canceled`). Errors: NOT_FOUND; CONFLICT (status does not allow it).
 */
export async function cancelSubscription(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriptionId: string,
  input: CancelSubscriptionRequest,
): Promise<Subscription> {
  const trigger: SubscriptionTrigger = input.at_period_end === false ? 'cancel' : 'cancel_at_period_end';
  return runTransition(runtime, principal, subscriptionId, (subscription) => {
    requirePortalAllowed(principal, subscription, trigger);
    requireAllowed(subscription, trigger);
    return { trigger, reason: input.reason ?? null };
  });
}

/**
 * Applies a trigger that needs nothing else (`pause`, `resume`, `suspend`, `unsuspend`) and emits its
 * event (`subscription.paused`, `.resumed`, `.suspended`, `.resumed`). Errors: NOT_FOUND; CONFLICT.
 */
export async function triggerSubscription(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriptionId: string,
  trigger: 'pause' | 'resume' | 'suspend' | 'unsuspend',
): Promise<Subscription> {
  return runTransition(runtime, principal, subscriptionId, (subscription) => {
    requirePortalAllowed(principal, subscription, trigger);
    requireAllowed(subscription, trigger);
    return { trigger };
  });
}

/**
 * What a subscriber may do to its own subscription in the portal (DESIGN D27): cancel at the period's end and
 * withdraw such a cancellation — not cancel at once, nor resume what the creator paused. Errors: CONFLICT.
 */
function requirePortalAllowed(principal: Principal, subscription: Subscription, trigger: SubscriptionTrigger): void {
  if (!principal.subscriberId) return;
  if (trigger === 'cancel')
    throw new ProblemError(
      'CONFLICT',
      `In the subscriber portal subscription ${subscription.id} can be cancelled at the end of its period only.`,
    );
  if (trigger === 'resume' && subscription.status !== 'pending_cancellation') {
    throw new ProblemError(
      'CONFLICT',
      `Subscription ${subscription.id} is ${subscription.status}: in the subscriber portal only a cancellation scheduled for the period end can be withdrawn.`,
    );
  }
}

/**
 * Moves a trialing, active, pending_cancellation or past_due subscription to another plan of its project; a price per
 * day not lower is an upgrade, else a downgrade. Errors: NOT_FOUND (subscription, plan of another project);
 * VALIDATION_FAILED (currency); CONFLICT (status, inactive plan, same plan).
 */
export async function changeSubscriptionPlan(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriptionId: string,
  planId: string,
): Promise<Subscription> {
  return runTransition(runtime, principal, subscriptionId, async (subscription, current) => {
    requireAllowed(subscription, 'upgrade');
    const plan = await getPlan(runtime.store, principal, planId);
    return decidePlanChange(subscription, current, plan);
  });
}

/**
 * Suspends every subscription of a subscriber whose status allows it (trialing, active,
 * pending_cancellation, past_due, paused → suspended, `subscription.suspended` each, in its own
 * transaction) — what banning a subscriber does (DESIGN D17). Others are left as they are. Returns the
 * suspended subscriptions. Errors: NOT_FOUND (subscriber).
 */
export async function suspendSubscriptionsOfSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriberId: string,
): Promise<Subscription[]> {
  const subscriber = await getSubscriber(runtime.store, principal, subscriberId);
  const suspended: Subscription[] = [];
  let cursor: string | undefined;
  do {
    const page = await listSubscriptions(runtime.store, principal, subscriber.project_id, {
      limit: 100,
      cursor,
      subscriber_id: subscriberId,
    });
    for (const subscription of page.data) {
      if (!ruleFor(subscription.status, 'suspend')) continue;
      try {
        suspended.push(await triggerSubscription(runtime, principal, subscription.id, 'suspend'));
      } catch (error) {
        // Changed meanwhile into a status that cannot be suspended (canceled, expired…): leave it.
        if (!(error instanceof ProblemError && error.code === 'CONFLICT')) throw error;
      }
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return suspended;
}
