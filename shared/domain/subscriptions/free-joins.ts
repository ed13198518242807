import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';
import { AWAITING_CONFIRMATION, subscriberStore } from '../../store/subscribers.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { queueMessages } from '../messages/creation.js';
import { getPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { readConfirmation, unusableConfirmation } from '../portal-sessions/confirmations.js';
import { SIGN_IN_LINK_LIFETIME_MS } from '../portal-sessions/links.js';
import { loadProject, toProject } from '../projects/repository.js';
import { getSubscriber, prepareSubscriber } from '../subscribers/repository.js';
import type { Subscriber } from '../subscribers/schema.js';
import { subscriptionsOfSubscriber } from './access-facts.js';
import { addSubscriptionCreation, newSubscription, requireSubscribable } from './creation.js';
import { DAY_MS } from '../../clock.js';
import type { Subscription } from './schema.js';
import { changeSubscriptionWith } from './transitions.js';

/**
 * Free joins confirmed by e-mail (DESIGN D26, D15, D20): an anonymous free join makes an `incomplete` subscription
 * (and, for a new address, a subscriber that does not count against the tier) and e-mails a one-time confirmation link;
 * opening it activates the subscription (`payment_succeeded`: the confirmation is a free plan's first payment) and
 * counts the subscriber. Unconfirmed joins expire with D15's `incomplete_expired` deadline (23 hours).
 */

/** The runtime of a free join (its messages are queued, its access granted on the platform). */
type JoinRuntime = Runtime;

/** The 15-minute slot of now: at most one message of a kind per subscription and slot, however often it is asked. */
function slotOf(nowMs: number): string {
  return isoTime(nowMs - (nowMs % SIGN_IN_LINK_LIFETIME_MS));
}

/** Queues `kind` (the confirmation, or a sign-in link for an address already in) about `subscription`. */
async function queueJoinMessage(
  runtime: JoinRuntime,
  teamId: string,
  kind: 'join_confirmation' | 'sign_in_link',
  subscription: Subscription,
): Promise<void> {
  await queueMessages(runtime, teamId, [
    {
      kind,
      projectId: subscription.project_id,
      subscriberId: subscription.subscriber_id,
      subscriptionId: kind === 'join_confirmation' ? subscription.id : null,
      occasion: `requested:${slotOf(runtime.clock.nowMs())}`,
      graceDay: null,
    },
  ]);
}

/** Creates an `incomplete` subscription of free `plan` for `subscriber`, or with a new unconfirmed subscriber. */
async function createUnconfirmed(
  runtime: JoinRuntime,
  principal: Principal,
  plan: Plan,
  subscriber: { existing: Subscriber } | { email: string },
): Promise<Subscription> {
  const prepared =
    'email' in subscriber
      ? await prepareSubscriber(
          runtime,
          principal,
          plan.project_id,
          { email: subscriber.email, consent: false },
          undefined,
          {
            awaitingConfirmation: true,
          },
        )
      : undefined;
  const nowMs = runtime.clock.nowMs();
  const owner = prepared?.subscriber ?? (subscriber as { existing: Subscriber }).existing;
  const subscription = newSubscription({
    projectId: plan.project_id,
    subscriberId: owner.id,
    plan,
    source: 'free_plan',
    nowMs,
    startMs: nowMs,
    trialEndMs: null,
    endsAtMs: plan.interval === 'one_time' ? nowMs + (plan.access_days ?? 1) * DAY_MS : null,
    awaitingConfirmation: true,
  });
  const added = await unitOfWork(runtime, principal.teamId, (tx) =>
    addSubscriptionCreation(tx, runtime, principal, {
      subscription,
      subscriber: owner,
      plan,
      accessCode: null,
      newSubscriber: prepared,
    }),
  );
  return added.subscription;
}

/**
 * A free join of `email` to free plan `plan_id` of project `project_id` (DESIGN D26): the address's subscriber (or a
 * new one, not counted until confirmed) gets an `incomplete` subscription and a `join_confirmation` e-mail; a second
 * join of the same address re-sends it (at most once per 15 minutes) and creates nothing; an address that already has
 * access to the plan gets a sign-in link instead. Returns the subscription the welcome page names (null: a banned
 * subscriber, nothing sent). Errors: NOT_FOUND; CONFLICT (a paid or inactive plan, an archived project).
 */
export async function joinFreePlan(
  runtime: JoinRuntime,
  principal: Principal,
  input: { project_id: string; plan_id: string; email: string },
): Promise<{ subscription_id: string | null }> {
  const teamId = principal.teamId;
  const project = toProject(await loadProject(runtime.store, principal, input.project_id));
  const plan = await getPlan(runtime.store, principal, input.plan_id);
  requireSubscribable(project, plan, null);
  if (plan.amount !== 0)
    throw new ProblemError('CONFLICT', `Plan ${plan.id} is not free: it is joined through checkout.`);
  const [existingId] = await subscriberStore.idsWithEmail(runtime.store, teamId, project.id, input.email);
  if (!existingId) {
    const subscription = await createUnconfirmed(runtime, principal, plan, { email: input.email });
    await queueJoinMessage(runtime, teamId, 'join_confirmation', subscription);
    return { subscription_id: subscription.id };
  }
  const existing = await getSubscriber(runtime.store, principal, existingId);
  if (existing.status === 'banned') return { subscription_id: null };
  const onPlan = (await subscriptionsOfSubscriber(runtime.store, teamId, project.id, existingId)).filter(
    (subscription) => subscription.plan_id === plan.id,
  );
  const live = onPlan.find((subscription) => subscription.has_access);
  if (live) {
    await queueJoinMessage(runtime, teamId, 'sign_in_link', live);
    return { subscription_id: live.id };
  }
  const subscription =
    onPlan.find((candidate) => candidate.status === 'incomplete' && candidate.source === 'free_plan') ??
    (await createUnconfirmed(runtime, principal, plan, { existing }));
  await queueJoinMessage(runtime, teamId, 'join_confirmation', subscription);
  return { subscription_id: subscription.id };
}

/**
 * Opens a free join's confirmation link `token` of project `project_id` (DESIGN D26): in one transaction the link is
 * used up, the `incomplete` subscription becomes `active` (`subscription.activated`, access granted as for any
 * activation) and a subscriber the join created counts against the tier. A link of a subscription already active
 * (confirmed through another of its links) is used up and answers it. Errors: NOT_FOUND (unusable link);
 * CONFLICT (the join expired); TIER_LIMIT_REACHED (the team is full: nothing changed, the link still works).
 */
export async function confirmFreeJoin(
  runtime: JoinRuntime,
  principal: Principal,
  input: { project_id: string; token: string },
): Promise<Subscription> {
  const teamId = principal.teamId;
  return retryOnLostRace(
    async () => {
      const link = await readConfirmation(runtime, input.project_id, input.token);
      if (link.team_id !== teamId) throw unusableConfirmation();
      const subscriber = await subscriberStore.read(runtime.store, teamId, link.project_id, link.subscriber_id);
      const counts = subscriber?.[AWAITING_CONFIRMATION] === true;
      const confirm = () =>
        changeSubscriptionWith(
          runtime,
          principal,
          link.subscription_id,
          (subscription) => {
            if (subscription.status === 'incomplete') return { trigger: 'payment_succeeded' };
            if (subscription.has_access) return null;
            throw new ProblemError(
              'CONFLICT',
              'This join expired before its address was confirmed; join again from the join page.',
            );
          },
          (tx) => {
            link.take(tx);
            if (!counts) return;
            subscriberStore.confirmAddress(tx, teamId, link.project_id, link.subscriber_id);
            countUsage(tx, teamId, 'subscribers', 1);
          },
        );
      return counts ? withinTierLimit(runtime, teamId, 'subscribers', confirm) : confirm();
    },
    { exhausted: () => unusableConfirmation() },
  );
}
