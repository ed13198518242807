import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { completeDeadline, deadlineItem, scheduleDeadline, type Deadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { ProblemError, type FieldError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import { ConditionFailedError, decodeCursor, encodeCursor, itemWithKey, type Item, type Page, type Store } from '../../store/store.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { getPlan, planNotFound, toPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { loadProject, toProject } from '../projects/repository.js';
import { isLostRace, retryOnLostRace } from '../../store/optimistic.js';
import type { Project } from '../projects/schema.js';
import type { AccessCode } from '../access-codes/schema.js';
import { getSubscriber, isEmptySetChange, livePlanAttribute, subscriberNotFound, toSubscriber, writeSubscriberAccess, type PreparedSubscriber, type SubscriberAccessSetChange } from '../subscribers/repository.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import type { Subscriber } from '../subscribers/schema.js';
import { DAY_MS, applyTrigger, nextDueTrigger, periodEnd as periodEndOf, type DueTrigger } from './lifecycle.js';
import { toSubscription } from './records.js';
import { accessFactKeys, accessFactsOf, applyPlatformAccess, isPaidAccess, prepareAccessChange, type AccessFacts, type PlatformAccessFollowUp, type PreparedAccessChange } from './member-access.js';
import type { CancelSubscriptionRequest, CreateSubscriptionRequest, ListSubscriptionsQuery, Subscription, SubscriptionSource } from './schema.js';
import { hasAccess, initialStatus, isTerminal, ruleFor, conflictOf, type SubscriptionTrigger } from './state-machine.js';

/**
 * Persistence and use cases of subscriptions (DESIGN D6, D14, D15). A subscription is one item in a
 * partition of its own (`keys.subscription`), so a read by id and every transition read it with one
 * GetItem; a project's subscriptions are listed through the sparse GSI
 * (`TEAM#<team>#PROJECT#<project>#SUBSCRIPTIONS`, creation order), a subscriber's through index items
 * in the subscriber's per-project partition ({@link writeSubscriptionIndex}: each also carries what the web
 * access check needs of its subscription), written in the creation's and every transition's transaction;
 * the same transactions keep the ids of the subscriber's subscriptions granting (paid) access in its access
 * summary's sets ({@link accessSetChange}), so an access change needs no Query of the others.
 *
 * Every change is one transaction conditional on the `revision` read (optimistic concurrency), holding
 * the subscription's new state, its ONE `subscription.*` event (D6), the member access events when
 * access starts or ends, the project's and plans' `live_subscription_count` and the subscriber's live
 * plan counter (`livePlanAttribute`, read by the subscriber list's `plan_id` filter) (`ADD`: +1 on
 * creation, −1 on entering a terminal status, moved on a plan change) and the subscription's clock deadline: the
 * item records `deadline_at` (the due time of its one `subscription.clock` deadline, or null) and each
 * transition puts, moves or deletes that deadline to match {@link nextDueTrigger}.
 */

/** The stored subscription item: the public fields plus `revision` and `deadline_at`. */
type StoredSubscription = Item & { revision?: number; deadline_at?: string | null };

/** The deadline kind of subscriptions (one deadline per subscription: its next clock-driven trigger). */
export const SUBSCRIPTION_DEADLINE_KIND = 'subscription.clock' as const;

/** Clock-driven transitions one deadline application performs at most (e.g. renewals missed while the worker was down). */
const MAX_CLOCK_STEPS = 24;

const notFound = (subscriptionId: string) => new ProblemError('NOT_FOUND', `No subscription ${subscriptionId}.`);

/** The principal the clock acts as: the subscription's team, every project, no abilities (reads only). */
function clockPrincipal(teamId: string): Principal {
  return { tokenId: 'clock', teamId, abilities: new Set(), projectIds: null };
}

/** The stored subscription of the principal's team (strongly consistent). Errors: NOT_FOUND (absent, foreign, out of scope). */
async function loadSubscription(store: Store, principal: Principal, subscriptionId: string): Promise<StoredSubscription> {
  const item = await store.get(keys.subscription(principal.teamId, subscriptionId));
  if (!item || !canAccessProject(principal, item.project_id as string)) throw notFound(subscriptionId);
  return item;
}

/**
 * Reads one subscription by id within the principal's team (`GET /v1/subscriptions/{id}`): one GetItem.
 * Errors: NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
export async function getSubscription(store: Store, principal: Principal, subscriptionId: string): Promise<Subscription> {
  return toSubscription(await loadSubscription(store, principal, subscriptionId));
}

/**
 * Lists a project's subscriptions in creation order, paged (DESIGN D12), optionally only a subscriber's
 * (`subscriber_id`: the subscriber's index items, then one BatchGet), a plan's (`plan_id`) or a status's
 * (`status`). Filters apply to the page read, so a page may be short while `next_cursor` is set.
 * Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED for a cursor of another list.
 */
export async function listSubscriptions(store: Store, principal: Principal, projectId: string, query: Pick<ListSubscriptionsQuery, 'limit' | 'cursor' | 'status' | 'plan_id' | 'subscriber_id'>): Promise<Page<Subscription>> {
  requireProjectAccess(principal, projectId);
  const teamId = principal.teamId;
  const matches = (subscription: Subscription) => (!query.status || subscription.status === query.status) && (!query.plan_id || subscription.plan_id === query.plan_id);
  if (query.subscriber_id) {
    const partition = keys.subscriberSubscriptionsPartition(teamId, projectId, query.subscriber_id);
    const startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.subscriberSubscription });
    const [project, index] = await Promise.all([
      store.get(keys.project(teamId, projectId), { projection: 'pk' }),
      store.query({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.subscriberSubscription },
        Limit: query.limit,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    ]);
    if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
    const ids = index.items.map((item) => item.subscription_id as string);
    const items = await store.batchGet(ids.map((id) => keys.subscription(teamId, id)));
    const byId = new Map(items.map((item) => [item.id as string, toSubscription(item)]));
    const data = ids.flatMap((id) => {
      const subscription = byId.get(id);
      return subscription && matches(subscription) ? [subscription] : [];
    });
    return { data, next_cursor: encodeCursor(index.lastEvaluatedKey) };
  }
  const partition = keys.projectSubscriptionsIndex(teamId, projectId);
  const startKey = decodeCursor(query.cursor, partition, { partitionAttribute: secondaryIndex.partitionKey, keyAttributes: secondaryIndex.cursorAttributes, sortKeyPrefix: sortKeyPrefix.subscription });
  const filters: string[] = [];
  const names: Record<string, string> = { '#gsi_pk': secondaryIndex.partitionKey };
  const values: Record<string, unknown> = { ':pk': partition };
  if (query.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = query.status;
  }
  if (query.plan_id) {
    filters.push('plan_id = :plan_id');
    values[':plan_id'] = query.plan_id;
  }
  const [project, result] = await Promise.all([
    store.get(keys.project(teamId, projectId), { projection: 'pk' }),
    store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: '#gsi_pk = :pk',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      Limit: query.limit,
      ExclusiveStartKey: startKey,
    }),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return { data: result.items.map(toSubscription), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}

// ---------------------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------------------

/** The stored item of a new subscription (GSI keys for the project's list; `deadline_at` of its first deadline). */
function storedSubscription(teamId: string, subscription: Subscription, due: DueTrigger | null): StoredSubscription {
  const { has_access: _derived, ...fields } = subscription;
  return {
    ...keys.subscription(teamId, subscription.id),
    entity: entity.subscription,
    team_id: teamId,
    [secondaryIndex.partitionKey]: keys.projectSubscriptionsIndex(teamId, subscription.project_id),
    [secondaryIndex.sortKey]: keys.projectSubscriptionsIndexSortKey(subscription.created_at, subscription.id),
    ...fields,
    revision: 1,
    deadline_at: due ? isoTime(due.atMs) : null,
  };
}

const deadlineOf = (teamId: string, subscription: Subscription, due: DueTrigger): Deadline => ({
  teamId,
  kind: SUBSCRIPTION_DEADLINE_KIND,
  subjectId: subscription.id,
  projectId: subscription.project_id,
  dueAt: isoTime(due.atMs),
});

const invalid = (errors: FieldError[]) =>
  new ProblemError('VALIDATION_FAILED', `The subscription\u2019s dates are inconsistent: ${errors.map((error) => `${error.path} ${error.message}`).join('; ')}.`, { errors });

/** Tolerated clock skew for a `starts_at` "now" sent by a client, in milliseconds. */
const START_SKEW_MS = 5 * 60 * 1000;

/**
 * Refuses a new subscription (DESIGN D15 "(new)" row) of `subscriber` (null: a subscriber created in the
 * same transaction) to `plan` in `project`. Errors: NOT_FOUND (subscriber or plan of another project);
 * CONFLICT (archived project, inactive plan, banned subscriber).
 */
export function requireSubscribable(project: Project, plan: Plan, subscriber: Subscriber | null): void {
  if (subscriber && subscriber.project_id !== project.id) throw new ProblemError('NOT_FOUND', `No subscriber ${subscriber.id} in project ${project.id}.`);
  if (plan.project_id !== project.id) throw new ProblemError('NOT_FOUND', `No plan ${plan.id} in project ${project.id}.`);
  if (project.status !== 'active') throw new ProblemError('CONFLICT', `Project ${project.id} is ${project.status}: no new subscriptions; unarchive it first.`);
  if (plan.status !== 'active') throw new ProblemError('CONFLICT', `Plan ${plan.id} is inactive: it takes no new subscriptions; activate it first.`);
  if (subscriber?.status === 'banned') throw new ProblemError('CONFLICT', `Subscriber ${subscriber.id} is banned: no new subscriptions; unban them first.`);
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
  /** Billed through a payment provider (source `provider`): its first payment decides pending / incomplete (D15, D16). */
  billing?: SubscriptionBilling;
}

/** A subscription billed through `provider`; the first payment's state: `pending` → pending, `failed` → incomplete, `succeeded` → as without billing. */
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
  /** The access code redeemed for it (as it reads after the redemption), carried by `subscription.created`; null otherwise. */
  accessCode: AccessCode | null;
  /** A subscriber created in the same transaction (its item is put with the live plan counter), instead of an existing one. */
  newSubscriber?: PreparedSubscriber;
}

/**
 * Adds a subscription's creation to `tx` (DESIGN D15 "(new)" row; the one creation path of the
 * subscriptions module): the subscription (its first clock deadline, GSI keys), the subscriber's index
 * item, its id in the subscriber's access-summary sets when it starts with access ({@link accessSetChange};
 * merged into the summary's creation for a new subscriber: one write per item), `live_subscription_count` + 1 on the project and the plan (each conditional on being active:
 * CONFLICT), the subscriber's live plan counter + 1 (conditional on the subscriber existing and not being
 * banned: CONFLICT; or the new subscriber's item put with it), `subscription.created` (with
 * `access_code`) and, when it starts with access, the member access events (the platform is asked for
 * access first: its invite links go on the subscription). Returns the subscription as written (with its
 * `invite_links`) and the platform access calls to make after the commit ({@link applyPlatformAccess}).
 */
export async function addSubscriptionCreation(tx: Transaction, runtime: UnitOfWorkRuntime, principal: Principal, creation: SubscriptionCreation): Promise<AddedSubscription> {
  const teamId = principal.teamId;
  const { subscriber, plan } = creation;
  const access = creation.subscription.has_access
    ? await prepareAccessChange(runtime, principal, { subscriber, plan, before: null, after: creation.subscription, newSubscriber: creation.newSubscriber !== undefined })
    : null;
  const subscription = access?.subscription ?? creation.subscription;
  const projectId = subscription.project_id;
  const due = nextDueTrigger(subscription);
  tx.put(storedSubscription(teamId, subscription, due), { condition: 'attribute_not_exists(pk)' });
  writeSubscriptionIndex(tx, teamId, subscription);
  tx.update(keys.project(teamId, projectId), {
    expression: 'ADD live_subscription_count :one',
    condition: 'attribute_exists(pk) AND #status = :active',
    names: { '#status': 'status' },
    values: { ':one': 1, ':active': 'active' },
    onConditionFailed: () => new ProblemError('CONFLICT', `Project ${projectId} was archived or deleted meanwhile: no new subscriptions.`),
  });
  tx.update(keys.plan(teamId, plan.id), {
    expression: 'ADD live_subscription_count :one',
    condition: 'attribute_exists(pk) AND #status = :active',
    names: { '#status': 'status' },
    values: { ':one': 1, ':active': 'active' },
    onConditionFailed: () => new ProblemError('CONFLICT', `Plan ${plan.id} was deactivated or deleted meanwhile: no new subscriptions.`),
  });
  if (due) scheduleDeadline(tx, deadlineOf(teamId, subscription, due));
  tx.emit({ type: 'subscription.created', projectId, data: { subscription, subscriber, plan, access_code: creation.accessCode } });
  const accessSets = accessSetChange(null, subscription);
  if (creation.newSubscriber) {
    // One write of the new subscriber's access summary: its creation and this subscription's sets.
    creation.newSubscriber.write(tx, { attributes: { [livePlanAttribute(plan.id)]: 1 }, projectGuarded: true, accessSets });
  } else {
    if (!isEmptySetChange(accessSets)) writeSubscriberAccess(tx, teamId, projectId, subscriber.id, { sets: accessSets });
    tx.update(keys.subscriber(teamId, projectId, subscriber.id), {
      expression: 'ADD #live_plan :one',
      condition: 'attribute_exists(pk) AND (attribute_not_exists(#status) OR #status <> :banned)',
      names: { '#status': 'status', '#live_plan': livePlanAttribute(plan.id) },
      values: { ':banned': 'banned', ':one': 1 },
      onConditionFailed: () => new ProblemError('CONFLICT', `Subscriber ${subscriber.id} was banned or deleted meanwhile: no new subscriptions.`),
    });
  }
  return { subscription, followUp: access ? access.write(tx) : null };
}

/**
 * The change of the subscriber's access-summary sets (`subscriberAccessAttribute`) when a
 * subscription goes from `before` (null: created) to `after`: its id added to `granting` when it gains
 * access ({@link hasAccess}) and deleted when it loses it; the same for `paid` with paid access
 * ({@link isPaidAccess}). Empty when its access does not change. Pure.
 */
function accessSetChange(before: Subscription | null, after: Subscription): SubscriberAccessSetChange {
  const change: SubscriberAccessSetChange = { add: { granting: [], paid: [] }, delete: { granting: [], paid: [] } };
  const grants = (subscription: Subscription | null) => subscription !== null && hasAccess(subscription.status);
  const tests = { granting: grants, paid: (subscription: Subscription | null) => grants(subscription) && isPaidAccess(subscription!) };
  for (const set of ['granting', 'paid'] as const) {
    const had = tests[set](before);
    const has = tests[set](after);
    if (had && !has) change.delete[set].push(after.id);
    else if (!had && has) change.add[set].push(after.id);
  }
  return change;
}

/**
 * Adds to `tx` the subscription's index item in its subscriber's partition (`keys.subscriberSubscription`),
 * put whole: the subscription's id plus what the web access check needs of it (DESIGN D15):
 * `status`, `ends_at`, `current_period_end` (ISO 8601 or null), `plan_id` and `status_changed_at`. Every
 * transaction that creates a subscription or changes any of those fields calls it, so the check answers
 * from one Query of the subscriber's partition. Unconditional: the subscription item's own write in the
 * transaction carries the conditions (its revision).
 */
function writeSubscriptionIndex(tx: Transaction, teamId: string, subscription: Subscription): void {
  tx.put({
    ...keys.subscriberSubscription(teamId, subscription.project_id, subscription.subscriber_id, subscription.created_at, subscription.id),
    entity: entity.subscriberSubscription,
    team_id: teamId,
    subscription_id: subscription.id,
    status: subscription.status,
    ends_at: subscription.ends_at,
    current_period_end: subscription.current_period_end,
    plan_id: subscription.plan_id,
    status_changed_at: subscription.status_changed_at,
  });
}

/** What {@link addSubscriptionCreation} added: the subscription as written, and the platform calls to make after the commit. */
export interface AddedSubscription {
  subscription: Subscription;
  followUp: PlatformAccessFollowUp | null;
}

/**
 * Creates a subscription (`POST /v1/projects/{project_id}/subscriptions`, DESIGN D15 "(new)" row): a
 * creator grant on a priced plan or a free plan's subscription, neither needing a payment. It starts
 * `scheduled` (future `starts_at`), `trialing` (`trial: true`, the plan's `trial_days`) or `active`; a
 * one_time plan gets `ends_at` = start + `access_days` unless given. One transaction
 * ({@link addSubscriptionCreation}) holds the subscription, its counters, its first clock deadline and
 * `subscription.created` (plus the member access events when it starts with access).
 * Errors: NOT_FOUND (project, subscriber or plan absent, foreign, out of scope, or of another project);
 * VALIDATION_FAILED (dates, trial on a plan without one); CONFLICT (archived project, inactive plan,
 * banned subscriber).
 *
 * `extension` (another use case creating a subscription, e.g. recording a first payment, DESIGN D16):
 * `billing` creates it billed through a payment provider (source `provider`), whose first payment
 * decides the status — pending (a pending payment), incomplete (a failed one), else as above; `alongside`
 * adds that use case's writes to the same transaction, before the subscription's (so its events come first).
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
  const [subscriber, plan] = await Promise.all([getSubscriber(runtime.store, principal, input.subscriber_id), getPlan(runtime.store, principal, input.plan_id)]);
  requireSubscribable(project, plan, subscriber);

  const nowMs = runtime.clock.nowMs();
  const errors: FieldError[] = [];
  const requestedStartMs = input.starts_at ? Date.parse(input.starts_at) : nowMs;
  if (requestedStartMs < nowMs - START_SKEW_MS) errors.push({ path: 'starts_at', message: 'must not be in the past' });
  const startMs = Math.max(requestedStartMs, nowMs);
  if (input.trial && plan.trial_days === 0) errors.push({ path: 'trial', message: `plan ${plan.id} has no trial (trial_days 0)` });
  const trialEndMs = input.trial && plan.trial_days > 0 ? startMs + plan.trial_days * DAY_MS : null;
  const endsAtMs = input.ends_at ? Date.parse(input.ends_at) : plan.interval === 'one_time' ? startMs + (plan.access_days ?? 1) * DAY_MS : null;
  if (endsAtMs !== null && endsAtMs <= startMs) errors.push({ path: 'ends_at', message: 'must be after starts_at' });
  if (endsAtMs !== null && trialEndMs !== null && endsAtMs <= trialEndMs) errors.push({ path: 'ends_at', message: 'must be after the trial ends' });
  if (errors.length) throw invalid(errors);

  const source: SubscriptionSource = plan.amount === 0 ? 'free_plan' : 'creator_grant';
  const subscription = newSubscription({ projectId, subscriberId: subscriber.id, plan, source, nowMs, startMs, trialEndMs, endsAtMs, billing: extension.billing });
  const added = await unitOfWork(runtime, teamId, async (tx) => {
    await extension.alongside?.(tx, { before: null, after: subscription, subscriber, plan });
    return addSubscriptionCreation(tx, runtime, principal, { subscription, subscriber, plan, accessCode: null });
  });
  await applyPlatformAccess(runtime, teamId, added.followUp);
  return added.subscription;
}

/**
 * A subscription change as another object's use case sees it inside the transaction (DESIGN D14, D16):
 * the subscription before (null when it is being created) and after, its subscriber (with consented
 * contact data, for payloads: D10) and its plan after the change.
 */
export interface SubscriptionChange {
  before: Subscription | null;
  after: Subscription;
  subscriber: Subscriber;
  plan: Plan;
}

/** Writes of another object added to a subscription's transaction (same TransactWriteItems; never the subscription, project or plan items). */
export type AlongsideWrites = (tx: Transaction, change: SubscriptionChange) => void | Promise<void>;

/** What {@link createSubscription} takes from another use case creating a subscription (see there). */
export interface SubscriptionCreationExtension {
  billing?: SubscriptionBilling;
  alongside?: AlongsideWrites;
}

// ---------------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------------

/** What a use case asks of a subscription: a trigger, and for plan changes (upgrade / downgrade) the new plan; a reason for cancellations. */
export interface Decision {
  trigger: SubscriptionTrigger;
  newPlan?: Plan;
  reason?: string | null;
}

/** What a transition reads beside its subscription ({@link loadTransitionReads}). */
interface TransitionReads {
  subscriber: Subscriber;
  plan: Plan;
  /** The project and the subscriber's conversion marker, for an access change ({@link prepareAccessChange}). */
  facts: AccessFacts;
}

/**
 * Reads what a transition of `subscription` needs beside it — its plan, its subscriber, its project and
 * the subscriber's conversion marker (for an access change) — in ONE strongly consistent BatchGetItem:
 * the subscription names its project, so the subscriber is read by its key (no reference item).
 * Errors: NOT_FOUND naming the plan or the subscriber when it is gone or out of the principal's scope
 * (what `getPlan` / `getSubscriber` answer).
 */
async function loadTransitionReads(store: Store, principal: Principal, subscription: Subscription): Promise<TransitionReads> {
  const teamId = principal.teamId;
  const { project_id: projectId, plan_id: planId, subscriber_id: subscriberId } = subscription;
  const planKey = keys.plan(teamId, planId);
  const subscriberKey = keys.subscriber(teamId, projectId, subscriberId);
  const items = await store.batchGet([planKey, subscriberKey, ...accessFactKeys(teamId, projectId, subscriberId)]);
  const plan = itemWithKey(items, planKey);
  if (!plan || !canAccessProject(principal, plan.project_id as string)) throw planNotFound(planId);
  const subscriber = itemWithKey(items, subscriberKey);
  if (!subscriber) throw subscriberNotFound(subscriberId);
  return { plan: toPlan(plan), subscriber: toSubscriber(subscriber, { contact: true }), facts: accessFactsOf(items, teamId, projectId, subscriberId) };
}

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
 * Commits one transition of a loaded subscription: the new state (conditional on the revision read), its
 * subscriber index item ({@link writeSubscriptionIndex}), the access-summary sets when its access changes ({@link accessSetChange}), the deadline change, the counters, the one `subscription.*` event and the member access events; then makes
 * the platform access calls (after the commit, never failing the transition). Returns the new subscription. Throws CONFLICT (pair not allowed), ConditionFailedError / TransactionCanceledError
 * on a lost race (the caller retries), and ProblemErrors of conditions (a plan change to a plan
 * deactivated meanwhile).
 */
async function commitTransition(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  item: StoredSubscription,
  context: TransitionReads,
  decision: Decision,
  options: TransitionOptions,
): Promise<Subscription> {
  const teamId = principal.teamId;
  const before = toSubscription(item);
  const planAfter = decision.newPlan ?? context.plan;
  const { next: moved, transition } = applyTrigger(before, decision.trigger, { atMs: options.atMs ?? runtime.clock.nowMs(), plan: planAfter, reason: decision.reason });
  // Access starts or ends: the platform is asked for a grant now (its invite links go on the subscription).
  const access: PreparedAccessChange | null =
    hasAccess(before.status) !== hasAccess(moved.status) ? await prepareAccessChange(runtime, principal, { subscriber: context.subscriber, plan: planAfter, before, after: moved, facts: context.facts }) : null;
  const next = access?.subscription ?? moved;
  const due = nextDueTrigger(next);
  const dueAt = due ? isoTime(due.atMs) : null;
  const revision = Number(item.revision ?? 0);
  const { has_access: _derived, id: _id, project_id: _project, created_at: _created, ...fields } = next;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':revision': revision, ':next_revision': revision + 1, ':deadline_at': dueAt };
  const sets = Object.entries(fields).map(([field, value]) => {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    return `#${field} = :${field}`;
  });
  let followUp: PlatformAccessFollowUp | null = null;
  // Returns the new subscription: what the operation answers, so the request's idempotency completion
  // stored in this transaction is final and needs no write of its own (D3).
  await unitOfWork(runtime, teamId, async (tx) => {
    await options.alongside?.(tx, { before, after: next, subscriber: context.subscriber, plan: planAfter });
    tx.update(keys.subscription(teamId, before.id), {
      expression: `SET ${sets.join(', ')}, revision = :next_revision, deadline_at = :deadline_at`,
      condition: 'attribute_exists(pk) AND revision = :revision',
      names,
      values,
    });
    writeSubscriptionIndex(tx, teamId, next);
    const accessSets = accessSetChange(before, next);
    if (!isEmptySetChange(accessSets)) writeSubscriberAccess(tx, teamId, before.project_id, before.subscriber_id, { sets: accessSets });
    writeDeadline(tx, teamId, next, due, item.deadline_at ?? null, options.fromDeadline);
    const ended = isTerminal(next.status) && !isTerminal(before.status);
    if (ended) {
      tx.update(keys.project(teamId, before.project_id), { expression: 'ADD live_subscription_count :minus', condition: 'attribute_exists(pk)', values: { ':minus': -1 } });
      tx.update(keys.plan(teamId, before.plan_id), { expression: 'ADD live_subscription_count :minus', condition: 'attribute_exists(pk)', values: { ':minus': -1 } });
    }
    writeLivePlanCounters(tx, teamId, before, ended ? null : next);
    if (decision.newPlan) {
      const newPlanId = decision.newPlan.id;
      tx.update(keys.plan(teamId, before.plan_id), { expression: 'ADD live_subscription_count :minus', condition: 'attribute_exists(pk)', values: { ':minus': -1 } });
      tx.update(keys.plan(teamId, newPlanId), {
        expression: 'ADD live_subscription_count :one',
        condition: 'attribute_exists(pk) AND #status = :active',
        names: { '#status': 'status' },
        values: { ':one': 1, ':active': 'active' },
        onConditionFailed: () => new ProblemError('CONFLICT', `Plan ${newPlanId} was deactivated or deleted meanwhile: no subscription can move to it.`),
      });
    }
    const data = { subscription: next, subscriber: context.subscriber, plan: planAfter, access_code: null };
    tx.emit({ type: transition.event, projectId: before.project_id, data: decision.newPlan ? { ...data, previous_plan: context.plan } : data });
    if (access) followUp = access.write(tx);
    return next;
  });
  await applyPlatformAccess(runtime, teamId, followUp);
  return next;
}

/**
 * Adds to `tx` the subscriber's live plan counters ({@link livePlanAttribute}) of a transition from
 * `before` to `after` (null: it entered a terminal status): − 1 on the plan it left live, + 1 on the plan
 * it is live on now; nothing when it stays live on the same plan. Conditional on the subscriber existing
 * (a lost race otherwise: the item is never created by the counter).
 */
function writeLivePlanCounters(tx: Transaction, teamId: string, before: Subscription, after: Subscription | null): void {
  if (after?.plan_id === before.plan_id) return;
  const names: Record<string, string> = { '#left': livePlanAttribute(before.plan_id) };
  const values: Record<string, unknown> = { ':minus': -1 };
  const additions = ['#left :minus'];
  if (after) {
    names['#joined'] = livePlanAttribute(after.plan_id);
    values[':one'] = 1;
    additions.push('#joined :one');
  }
  tx.update(keys.subscriber(teamId, before.project_id, before.subscriber_id), { expression: `ADD ${additions.join(', ')}`, condition: 'attribute_exists(pk)', names, values });
}

/**
 * Adds the deadline change of a transition: from a deadline being applied, move it (a put conditional on
 * its due time) or remove it ({@link completeDeadline}); otherwise put it when its due time changed and
 * delete it when none is due any more.
 */
function writeDeadline(tx: Transaction, teamId: string, next: Subscription, due: DueTrigger | null, previousDueAt: string | null, fromDeadline: Deadline | undefined): void {
  if (fromDeadline) {
    if (due) {
      tx.put(deadlineItem(deadlineOf(teamId, next, due)), { condition: 'attribute_exists(pk) AND due_at = :due_at', values: { ':due_at': fromDeadline.dueAt } });
    } else completeDeadline(tx, fromDeadline);
    return;
  }
  if (due) {
    if (isoTime(due.atMs) !== previousDueAt) scheduleDeadline(tx, deadlineOf(teamId, next, due));
  } else if (previousDueAt !== null) {
    tx.delete(keys.deadline(teamId, SUBSCRIPTION_DEADLINE_KIND, next.id));
  }
}

/**
 * Runs one operation-driven transition of a subscription (DESIGN D15): reads it, its plan and its
 * subscriber, lets `decide` choose the trigger (and plan), and commits it; a lost race re-reads and
 * decides again, at most `MAX_ATTEMPTS` times. Errors: NOT_FOUND; CONFLICT (the pair is not allowed
 * — naming the status and the allowed actions — or the subscription kept changing).
 */
async function runTransition(runtime: UnitOfWorkRuntime, principal: Principal, subscriptionId: string, decide: (subscription: Subscription, plan: Plan) => Promise<Decision> | Decision): Promise<Subscription> {
  return retryOnLostRace(async () => {
    const item = await loadSubscription(runtime.store, principal, subscriptionId);
    const subscription = toSubscription(item);
    const reads = await loadTransitionReads(runtime.store, principal, subscription);
    const decision = await decide(subscription, reads.plan);
    return await commitTransition(runtime, principal, item, reads, decision, {});
  }, { exhausted: () => new ProblemError('CONFLICT', `Subscription ${subscriptionId} kept changing while this request ran; read it again and retry.`) });
}

/**
 * One attempt of a subscription change that another object's use case decides and commits together
 * with its own writes, in ONE transaction (DESIGN D14, D16: a payment and the D15 transition its outcome
 * drives). Reads the subscription, its plan and its subscriber; `decide` returns the trigger to apply
 * (with `newPlan` for upgrade / downgrade: {@link planChangeTrigger}; checked against the D15 table:
 * CONFLICT naming the allowed actions when the pair is not allowed) or
 * null for no transition, in which case the subscription is left as it is and only checked unchanged
 * (its revision) in the transaction. `alongside` adds the caller's writes (called once per attempt).
 * Returns the subscription after the change. Errors: NOT_FOUND (subscription absent, foreign or out of
 * scope); CONFLICT; a lost race ({@link isLostRace}) is thrown for the caller to read again and retry.
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
    tx.check(keys.subscription(teamId, subscription.id), { condition: 'revision = :revision', values: { ':revision': Number(item.revision ?? 0) } });
  });
  return subscription;
}

/** Refuses a (status, trigger) pair the table does not allow (CONFLICT naming the allowed actions). */
function requireAllowed(subscription: Subscription, trigger: SubscriptionTrigger): void {
  if (!ruleFor(subscription.status, trigger)) throw conflictOf(subscription.status, trigger);
}

/**
 * Cancels a subscription (`POST /v1/subscriptions/{id}/cancel`): at period end by default (trialing or
 * active → pending_cancellation, `subscription.cancellation_scheduled`; the clock cancels it at
 * `current_period_end`), or at once with `at_period_end: false` (any non-terminal status → canceled,
 * `subscription.canceled`). Errors: NOT_FOUND; CONFLICT (status does not allow it).
 */
export async function cancelSubscription(runtime: UnitOfWorkRuntime, principal: Principal, subscriptionId: string, input: CancelSubscriptionRequest): Promise<Subscription> {
  const trigger: SubscriptionTrigger = input.at_period_end === false ? 'cancel' : 'cancel_at_period_end';
  return runTransition(runtime, principal, subscriptionId, (subscription) => {
    requireAllowed(subscription, trigger);
    return { trigger, reason: input.reason ?? null };
  });
}

/**
 * Applies a trigger that needs nothing else (`pause`, `resume`, `suspend`, `unsuspend`) and emits its
 * event (`subscription.paused`, `.resumed`, `.suspended`, `.resumed`). Errors: NOT_FOUND; CONFLICT.
 */
export async function triggerSubscription(runtime: UnitOfWorkRuntime, principal: Principal, subscriptionId: string, trigger: 'pause' | 'resume' | 'suspend' | 'unsuspend'): Promise<Subscription> {
  return runTransition(runtime, principal, subscriptionId, (subscription) => {
    requireAllowed(subscription, trigger);
    return { trigger };
  });
}

/** A plan's price per day in minor units (recurring: amount over the period's nominal days; one_time: over `access_days`). */
function pricePerDay(plan: Plan): number {
  const days = plan.interval === 'one_time' ? (plan.access_days ?? 1) : plan.interval === 'week' ? 7 * plan.interval_count : plan.interval === 'month' ? 30 * plan.interval_count : 365 * plan.interval_count;
  return plan.amount / days;
}

/**
 * Whether moving from plan `current` to plan `next` is an `upgrade` (a price per day not lower) or a
 * `downgrade` (DESIGN D15: "change plan to a higher / lower price"). Pure.
 */
export function planChangeTrigger(current: Plan, next: Plan): 'upgrade' | 'downgrade' {
  return pricePerDay(next) >= pricePerDay(current) ? 'upgrade' : 'downgrade';
}

/**
 * Moves a subscription to another plan of its project (`POST /v1/subscriptions/{id}/change-plan`):
 * trialing, active, pending_cancellation or past_due; status and period unchanged, the new plan's current
 * price version adopted. A price per day not lower than the current plan's is an upgrade
 * (`subscription.upgraded`), a lower one a downgrade (`subscription.downgraded`); the event carries both
 * plans. The plans' `live_subscription_count` moves in the same transaction.
 * Errors: NOT_FOUND (subscription or plan; a plan of another project); VALIDATION_FAILED (another
 * currency); CONFLICT (status, inactive plan, the plan it is already on).
 */
export async function changeSubscriptionPlan(runtime: UnitOfWorkRuntime, principal: Principal, subscriptionId: string, planId: string): Promise<Subscription> {
  return runTransition(runtime, principal, subscriptionId, async (subscription, current) => {
    requireAllowed(subscription, 'upgrade');
    const plan = await getPlan(runtime.store, principal, planId);
    if (plan.project_id !== subscription.project_id) throw new ProblemError('NOT_FOUND', `No plan ${planId} in project ${subscription.project_id}.`);
    if (plan.id === current.id) throw new ProblemError('CONFLICT', `Subscription ${subscription.id} is already on plan ${planId}.`);
    if (plan.status !== 'active') throw new ProblemError('CONFLICT', `Plan ${planId} is inactive: no subscription can move to it; activate it first.`);
    if (plan.currency !== current.currency) {
      throw new ProblemError('VALIDATION_FAILED', `Plan ${planId} is priced in ${plan.currency}, the subscription\u2019s plan in ${current.currency}; a plan change keeps the currency.`, {
        errors: [{ path: 'plan_id', message: `must be a plan priced in ${current.currency}` }],
      });
    }
    return { trigger: planChangeTrigger(current, plan), newPlan: plan };
  });
}

/**
 * Suspends every subscription of a subscriber whose status allows it (trialing, active,
 * pending_cancellation, past_due, paused → suspended, `subscription.suspended` each, in its own
 * transaction) — what banning a subscriber does (DESIGN D17). Others are left as they are. Returns the
 * suspended subscriptions. Errors: NOT_FOUND (subscriber).
 */
export async function suspendSubscriptionsOfSubscriber(runtime: UnitOfWorkRuntime, principal: Principal, subscriberId: string): Promise<Subscription[]> {
  const subscriber = await getSubscriber(runtime.store, principal, subscriberId);
  const suspended: Subscription[] = [];
  let cursor: string | undefined;
  do {
    const page = await listSubscriptions(runtime.store, principal, subscriber.project_id, { limit: 100, cursor, subscriber_id: subscriberId });
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

// ---------------------------------------------------------------------------------------------------
// The clock (DESIGN D15)
// ---------------------------------------------------------------------------------------------------

/**
 * The `subscription.clock` deadline (DESIGN D15): the subscription `deadline.subjectId` has a
 * clock-driven trigger due ({@link nextDueTrigger}: scheduled start, trial end and period renewal of
 * payment-free subscriptions, fixed-term end, period end of pending_cancellation, 23-hour incomplete
 * expiry, 14-day past-due and 30-day unpaid limits). Applies every trigger due by now in order (at most
 * {@link MAX_CLOCK_STEPS}), each in its own transaction that is conditional on the subscription's
 * revision and moves or removes this deadline conditionally on its due time, so applying it twice, or
 * from two runs at once, does nothing the second time. A deadline whose subscription is gone, or with
 * nothing due, is removed; one not yet due is moved to its time.
 */
export const applySubscriptionDeadline: DeadlineHandler = async (runtime, deadline) => {
  const principal = clockPrincipal(deadline.teamId);
  let current: Deadline = deadline;
  for (let step = 0; step < MAX_CLOCK_STEPS; step++) {
    const item = await runtime.store.get(keys.subscription(deadline.teamId, deadline.subjectId));
    const subscription = item ? toSubscription(item) : null;
    const due = subscription ? nextDueTrigger(subscription) : null;
    try {
      if (!item || !subscription || !due) {
        await unitOfWork(runtime, deadline.teamId, (tx) => completeDeadline(tx, current));
        return;
      }
      if (due.atMs > runtime.clock.nowMs()) {
        const dueAt = isoTime(due.atMs);
        if (dueAt !== current.dueAt) {
          await unitOfWork(runtime, deadline.teamId, (tx) => {
            tx.put(deadlineItem(deadlineOf(deadline.teamId, subscription, due)), { condition: 'attribute_exists(pk) AND due_at = :due_at', values: { ':due_at': current.dueAt } });
          });
        }
        return;
      }
      const reads = await loadTransitionReads(runtime.store, principal, subscription);
      const next = await commitTransition(runtime, principal, item, reads, { trigger: due.trigger }, { fromDeadline: current, atMs: due.atMs });
      const following = nextDueTrigger(next);
      // The transaction moved this deadline to the following trigger: nothing more is due before it.
      if (!following || following.atMs > runtime.clock.nowMs()) return;
      current = deadlineOf(deadline.teamId, next, following);
    } catch (error) {
      if (isLostRace(error) || error instanceof ConditionFailedError) return; // applied or moved by another run or a request
      throw error;
    }
  }
};
