import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import type { WebhookEventName } from '../../catalogues/webhook-events.js';
import { isoTime } from '../../clock.js';
import { ProblemError, type FieldError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { logger } from '../../logger.js';
import type { IntegrationRuntime } from '../../integrations.js';
import { manualPaymentProvider } from '../../providers/manual.js';
import type { PaymentProviderAdapters, PlanForSync, PlanSyncResult } from '../../providers/payment-provider.js';
import { retryPolicyOf, retryWhile, type RetryPolicy } from '../../retry.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import { decodeCursor, encodeCursor, type Item, type Page, type Store } from '../../store/store.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { NO_LIVE_SUBSCRIPTIONS, liveSubscriptionsOf, loadProject, planIdsOf, toProject } from '../projects/repository.js';
import { isLostRace, retryOnLostRace, revisionCondition } from '../../store/optimistic.js';
import type { Project } from '../projects/schema.js';
import {
  MAX_INTERVAL_COUNT,
  MAX_PLANS_PER_PROJECT,
  MAX_PRICE_VERSIONS,
  type CreatePlanRequest,
  type ListPlansQuery,
  type Plan,
  type PlanInterval,
  type PlanPriceVersion,
  type PlanStatus,
  type UpdatePlanRequest,
} from './schema.js';

/**
 * Persistence and use cases of subscription plans (DESIGN D6, D14, D16, D22). A plan is one item in its
 * team's partition (`TEAM#<team>`, `PLAN#<uuid>`), so `GET /v1/plans/{id}` is one GetItem within the
 * caller's team (a project-scoped token then sees it only when its project is in scope); a project's
 * plans are listed through the sparse GSI (`TEAM#<team>#PROJECT#<project>#PLANS`, creation order). The
 * project item records its plan ids (`plan_ids`, changed in the same transaction as the plan), which
 * bounds plans per project and lets the project's deletion remove exactly its plans.
 *
 * Besides the public fields the item holds `revision` (optimistic concurrency: each change is
 * conditional on the revision read and emits its events with the state written) and
 * `live_subscription_count` (absent = 0; maintained by the subscriptions use cases): deleting needs it
 * at 0, and a price change while it is above 0 adds a price version instead of editing the current one.
 *
 * Provider sync (D22): the provider is called outside any transaction; its outcome (`plan.synced` or
 * `plan.sync_failed`) is recorded afterwards in one unit of work, only if the plan did not change
 * meanwhile (a later change syncs again). Plans created or re-priced while the project has a provider
 * connected sync at once after their own transaction; `POST /v1/plans/{id}/sync` syncs on demand.
 */

/** The stored plan item. */
type StoredPlan = Item & { revision?: number; live_subscription_count?: number };

/** Options of the use cases that may call a payment provider. */
export interface SyncOptions {
  /**
   * The adapters by provider. The handlers pass `paymentProviderAdapters(runtime)` (Stripe included); the
   * default is only the credential-free `manual` one, so this module never imports the Stripe SDK and the
   * many bundles that read plans stay small (DESIGN D23).
   */
  adapters?: PaymentProviderAdapters;
  /** Retries of a retryable failure (default: the runtime's `IntegrationSettings.retry`; `shared/retry.ts`). */
  retry?: RetryPolicy;
}

/** A runtime the sync use cases run with: the unit of work's, and the integration settings (adapters, retry policy). */
export type SyncRuntime = UnitOfWorkRuntime & IntegrationRuntime;

/** NOT_FOUND for a plan id (absent, foreign or out of scope: the same answer). */
export const planNotFound = (planId: string) => new ProblemError('NOT_FOUND', `No plan ${planId}.`);

/** The public plan of a stored item. */
export function toPlan(item: Item): Plan {
  return {
    id: item.id as string,
    project_id: item.project_id as string,
    name: item.name as string,
    description: (item.description as string | null | undefined) ?? null,
    amount: item.amount as number,
    currency: item.currency as string,
    interval: item.interval as PlanInterval,
    interval_count: item.interval_count as number,
    access_days: (item.access_days as number | null | undefined) ?? null,
    trial_days: (item.trial_days as number | undefined) ?? 0,
    status: item.status as PlanStatus,
    price_version: item.price_version as number,
    price_history: (item.price_history as PlanPriceVersion[] | undefined) ?? [],
    sync_status: (item.sync_status as Plan['sync_status'] | undefined) ?? 'not_synced',
    payment_provider: (item.payment_provider as PaymentProvider | null | undefined) ?? null,
    provider_product_id: (item.provider_product_id as string | null | undefined) ?? null,
    provider_price_id: (item.provider_price_id as string | null | undefined) ?? null,
    synced_at: (item.synced_at as string | null | undefined) ?? null,
    sync_error: (item.sync_error as string | null | undefined) ?? null,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/**
 * The stored plan item of the principal's team (strongly consistent). Errors: NOT_FOUND when absent,
 * of another team, or of a project outside the token's project scope.
 */
async function loadPlan(store: Store, principal: Principal, planId: string): Promise<StoredPlan> {
  const item = await store.get(keys.plan(principal.teamId, planId));
  if (!item || !canAccessProject(principal, item.project_id as string)) throw planNotFound(planId);
  return item;
}

/** The project of a plan the caller may see (strongly consistent). Errors: NOT_FOUND naming the plan when the project is gone. */
async function projectOfPlan(store: Store, teamId: string, plan: Plan): Promise<Project> {
  const item = await store.get(keys.project(teamId, plan.project_id));
  if (!item) throw planNotFound(plan.id);
  return toProject(item);
}

/**
 * Reads one plan by id within the principal's team (`GET /v1/plans/{id}`; also what access codes and
 * subscriptions use to resolve a plan id). Errors: NOT_FOUND when absent, of another team, or of a
 * project outside the token's project scope (`scope:project:<uuid>`).
 */
export async function getPlan(store: Store, principal: Principal, planId: string): Promise<Plan> {
  return toPlan(await loadPlan(store, principal, planId));
}

/**
 * Lists a project's plans in creation order, paged (DESIGN D12), optionally only those with `status`
 * (applied by DynamoDB, so a page may be short while `next_cursor` is set).
 * Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED for a cursor of another list.
 */
export async function listPlans(store: Store, principal: Principal, projectId: string, query: Pick<ListPlansQuery, 'limit' | 'cursor' | 'status'>): Promise<Page<Plan>> {
  requireProjectAccess(principal, projectId);
  const partition = keys.projectPlansIndex(principal.teamId, projectId);
  const startKey = decodeCursor(query.cursor, partition, { partitionAttribute: secondaryIndex.partitionKey, keyAttributes: secondaryIndex.cursorAttributes, sortKeyPrefix: sortKeyPrefix.plan });
  const [project, result] = await Promise.all([
    store.get(keys.project(principal.teamId, projectId), { projection: 'pk' }),
    store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: '#gsi_pk = :pk',
      FilterExpression: query.status ? '#status = :status' : undefined,
      ExpressionAttributeNames: { '#gsi_pk': secondaryIndex.partitionKey, ...(query.status ? { '#status': 'status' } : {}) },
      ExpressionAttributeValues: { ':pk': partition, ...(query.status ? { ':status': query.status } : {}) },
      Limit: query.limit,
      ExclusiveStartKey: startKey,
    }),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return { data: result.items.map(toPlan), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}

// ---------------------------------------------------------------------------------------------------
// Billing terms
// ---------------------------------------------------------------------------------------------------

/** A plan's price and billing terms (the fields a price version holds) plus its trial. */
interface Terms {
  amount: number;
  currency: string;
  interval: PlanInterval;
  interval_count: number;
  access_days: number | null;
  trial_days: number;
}

const PRICE_FIELDS = ['amount', 'currency', 'interval', 'interval_count', 'access_days'] as const;

/**
 * Merges requested terms over the current ones (none for a new plan) and checks the cross-field rules:
 * `one_time` needs `access_days`, has `interval_count` 1 and no trial; recurring plans have no
 * `access_days` and at most 52 weeks, 12 months or 1 year per period. Switching interval without
 * `interval_count` resets it to 1; switching to recurring clears `access_days`, to one_time clears the
 * trial. Errors: VALIDATION_FAILED with the offending fields.
 */
function resolveTerms(requested: Partial<Omit<Terms, 'access_days'>> & { access_days?: number | null }, current?: Terms): Terms {
  const interval = requested.interval ?? current?.interval ?? 'month';
  const intervalChanged = current !== undefined && interval !== current.interval;
  const oneTime = interval === 'one_time';
  const terms: Terms = {
    amount: requested.amount ?? current?.amount ?? 0,
    currency: requested.currency ?? current?.currency ?? 'USD',
    interval,
    interval_count: requested.interval_count ?? (current && !intervalChanged ? current.interval_count : 1),
    access_days: requested.access_days !== undefined ? requested.access_days : oneTime ? (current?.access_days ?? null) : null,
    trial_days: requested.trial_days ?? (oneTime ? 0 : (current?.trial_days ?? 0)),
  };
  const errors: FieldError[] = [];
  if (oneTime) {
    if (terms.access_days === null) errors.push({ path: 'access_days', message: 'required for a one_time plan (days of access it grants)' });
    if (terms.interval_count !== 1) errors.push({ path: 'interval_count', message: 'must be 1 for a one_time plan' });
    if (terms.trial_days !== 0) errors.push({ path: 'trial_days', message: 'a one_time plan has no trial' });
  } else {
    if (requested.access_days !== undefined && requested.access_days !== null) errors.push({ path: 'access_days', message: 'only one_time plans take access_days' });
    const most = MAX_INTERVAL_COUNT[interval];
    if (terms.interval_count > most) errors.push({ path: 'interval_count', message: `at most ${most} for interval ${interval} (a billing period is at most one year)` });
  }
  if (errors.length) throw new ProblemError('VALIDATION_FAILED', `The plan\u2019s billing terms are inconsistent: ${errors.map((error) => `${error.path} ${error.message}`).join('; ')}.`, { errors });
  return terms;
}

const termsOf = (plan: Plan): Terms => ({ amount: plan.amount, currency: plan.currency, interval: plan.interval, interval_count: plan.interval_count, access_days: plan.access_days, trial_days: plan.trial_days });
const priceVersionOf = (version: number, terms: Terms, effectiveFrom: string): PlanPriceVersion => ({
  version,
  amount: terms.amount,
  currency: terms.currency,
  interval: terms.interval,
  interval_count: terms.interval_count,
  access_days: terms.access_days,
  effective_from: effectiveFrom,
});

// ---------------------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------------------

const archivedConflict = (project: Project, what: string) =>
  new ProblemError('CONFLICT', `Project ${project.id} is archived: ${what} is not allowed; unarchive it first (POST /v1/projects/${project.id}/unarchive).`);

/**
 * Creates a plan in a project and emits `plan.created`, in one transaction with the project's plan set
 * (conditional on the project being active and below {@link MAX_PLANS_PER_PROJECT} plans). When the
 * project has a payment provider connected, the plan then syncs to it at once (`plan.synced` or
 * `plan.sync_failed`, recorded in its own unit of work); the answer is the plan after that attempt.
 * Errors: NOT_FOUND (project); VALIDATION_FAILED (billing terms); CONFLICT (archived project, plan limit).
 */
export async function createPlan(runtime: SyncRuntime, principal: Principal, projectId: string, input: CreatePlanRequest, options: SyncOptions = {}): Promise<Plan> {
  const terms = resolveTerms(input);
  const planId = newUuid();
  const { project, plan, stored } = await retryOnLostRace(async () => {
    const projectItem = await loadProject(runtime.store, principal, projectId);
    const project = toProject(projectItem);
    if (project.status === 'archived') throw archivedConflict(project, 'creating a plan');
    if (planIdsOf(projectItem).length >= MAX_PLANS_PER_PROJECT) throw new ProblemError('CONFLICT', `Project ${projectId} already has ${MAX_PLANS_PER_PROJECT} plans, the most it can; delete or reuse one.`);
    const now = isoTime(runtime.clock.nowMs());
    const plan: Plan = {
      id: planId,
      project_id: projectId,
      name: input.name,
      description: input.description ?? null,
      ...terms,
      status: input.status ?? 'active',
      price_version: 1,
      price_history: [priceVersionOf(1, terms, now)],
      sync_status: project.payment_provider ? 'pending' : 'not_synced',
      payment_provider: null,
      provider_product_id: null,
      provider_price_id: null,
      synced_at: null,
      sync_error: null,
      created_at: now,
      updated_at: now,
    };
    const stored: StoredPlan = {
      ...keys.plan(principal.teamId, planId),
      entity: entity.plan,
      team_id: principal.teamId,
      [secondaryIndex.partitionKey]: keys.projectPlansIndex(principal.teamId, projectId),
      [secondaryIndex.sortKey]: keys.projectPlansIndexSortKey(now, planId),
      ...plan,
      revision: 1,
    };
    await unitOfWork(runtime, principal.teamId, (tx) => {
      tx.put(stored, { condition: 'attribute_not_exists(pk)' });
      tx.update(keys.project(principal.teamId, projectId), {
        expression: 'ADD plan_ids :plan_id',
        condition: 'attribute_exists(pk) AND #status = :active AND (attribute_not_exists(plan_ids) OR size(plan_ids) < :max_plans)',
        names: { '#status': 'status' },
        values: { ':plan_id': new Set([planId]), ':active': 'active', ':max_plans': MAX_PLANS_PER_PROJECT },
      });
      tx.emit({ type: 'plan.created', projectId, data: { plan } });
    });
    return { project, plan, stored };
  }, { exhausted: () => new ProblemError('CONFLICT', `Project ${projectId} kept changing while the plan was being created; retry.`) });
  if (!project.payment_provider) return plan;
  return syncAfterWrite(runtime, principal.teamId, stored, project.payment_provider.provider, options);
}

// ---------------------------------------------------------------------------------------------------
// Update, activate, deactivate
// ---------------------------------------------------------------------------------------------------

/**
 * Changes a plan (DESIGN D16). Events, all in the change's transaction: `plan.updated` when a field
 * other than `status` changed, `plan.activated` / `plan.deactivated` when `status` changed; a request
 * that changes nothing writes nothing. A price change (amount, currency, interval, interval_count,
 * access_days) on a plan with live subscriptions adds a price version (`price_version` + 1, appended to
 * `price_history`; those subscriptions keep theirs until renewal); without subscriptions the current
 * version is edited in place (conditional on there still being none). A change the provider lists
 * (name, description, price, trial) marks the plan `pending` and, when the project has a provider
 * connected, syncs it at once after the transaction.
 * Errors: NOT_FOUND; VALIDATION_FAILED (billing terms); CONFLICT (activating in an archived project,
 * {@link MAX_PRICE_VERSIONS} versions, lost races).
 */
export async function updatePlan(runtime: SyncRuntime, principal: Principal, planId: string, input: UpdatePlanRequest, options: SyncOptions = {}): Promise<Plan> {
  return changePlan(runtime, principal, planId, options, (plan, project, item, nowIso) => {
    const terms = resolveTerms(
      {
        amount: input.amount,
        currency: input.currency,
        interval: input.interval,
        interval_count: input.interval_count,
        access_days: input.access_days,
        trial_days: input.trial_days,
      },
      termsOf(plan),
    );
    const next: Plan = { ...plan, ...terms };
    if (input.name !== undefined) next.name = input.name;
    if (input.description !== undefined) next.description = input.description;
    if (input.status !== undefined) next.status = input.status;
    const priceChanged = PRICE_FIELDS.some((field) => next[field] !== plan[field]);
    const listedChanged = priceChanged || next.name !== plan.name || next.description !== plan.description || next.trial_days !== plan.trial_days;
    const statusChanged = next.status !== plan.status;
    if (!listedChanged && !statusChanged) return null;
    if (statusChanged && next.status === 'active' && project.status === 'archived') throw archivedConflict(project, 'activating a plan');
    let condition: { expression: string; values: Record<string, unknown> } | undefined;
    if (priceChanged) {
      if (liveSubscriptionsOf(item) > 0) {
        if (plan.price_history.length >= MAX_PRICE_VERSIONS) {
          throw new ProblemError('CONFLICT', `Plan ${planId} already has ${MAX_PRICE_VERSIONS} price versions; create a new plan for this price.`);
        }
        next.price_version = plan.price_version + 1;
        next.price_history = [...plan.price_history, priceVersionOf(next.price_version, terms, nowIso)];
      } else {
        next.price_history = [...plan.price_history.filter((entry) => entry.version !== plan.price_version), priceVersionOf(plan.price_version, terms, nowIso)];
        condition = NO_LIVE_SUBSCRIPTIONS;
      }
    }
    if (listedChanged && (project.payment_provider || plan.sync_status !== 'not_synced')) next.sync_status = 'pending';
    const events: WebhookEventName[] = [];
    if (listedChanged) events.push('plan.updated');
    if (statusChanged) events.push(next.status === 'active' ? 'plan.activated' : 'plan.deactivated');
    return { next, events, condition, sync: listedChanged };
  });
}

/**
 * Sets a plan's status (`POST /v1/plans/{id}/activate|deactivate`) and emits `plan.activated` /
 * `plan.deactivated`. Errors: NOT_FOUND; CONFLICT (already in that status, or activating in an
 * archived project).
 */
export async function setPlanStatus(runtime: SyncRuntime, principal: Principal, planId: string, status: PlanStatus): Promise<Plan> {
  return changePlan(runtime, principal, planId, {}, (plan, project) => {
    if (plan.status === status) {
      throw new ProblemError('CONFLICT', `Plan ${planId} is already ${status}; ${status === 'active' ? 'deactivate' : 'activate'} is the action it allows.`);
    }
    if (status === 'active' && project.status === 'archived') throw archivedConflict(project, 'activating a plan');
    return { next: { ...plan, status }, events: [status === 'active' ? 'plan.activated' : 'plan.deactivated'], sync: false };
  });
}

/** What a plan change decided: the plan to write, its events, an extra condition, and whether to sync afterwards. */
interface PlanChange {
  next: Plan;
  events: WebhookEventName[];
  condition?: { expression: string; values: Record<string, unknown> };
  sync: boolean;
}

/**
 * Reads the plan and its project, lets `decide` choose the change (null: nothing to do), writes it with
 * its events in one transaction conditional on the revision read, and syncs afterwards when asked and
 * the project has a provider. A lost race re-reads and decides again, at most `MAX_ATTEMPTS` times.
 */
async function changePlan(
  runtime: SyncRuntime,
  principal: Principal,
  planId: string,
  options: SyncOptions,
  decide: (plan: Plan, project: Project, item: StoredPlan, nowIso: string) => PlanChange | null,
): Promise<Plan> {
  const written = await retryOnLostRace(async () => {
    const item = await loadPlan(runtime.store, principal, planId);
    const plan = toPlan(item);
    const project = await projectOfPlan(runtime.store, principal.teamId, plan);
    const nowIso = isoTime(runtime.clock.nowMs());
    const change = decide(plan, project, item, nowIso);
    if (!change) return { next: plan, sync: null };
    const next: Plan = { ...change.next, updated_at: nowIso };
    const revision = revisionCondition(item);
    const fields = Object.keys(next).filter((field) => field !== 'id' && field !== 'project_id' && field !== 'created_at') as (keyof Plan)[];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ...revision.values, ...(change.condition?.values ?? {}), ':revision': Number(item.revision ?? 0) + 1 };
    const sets = fields.map((field) => {
      names[`#${field}`] = field;
      values[`:${field}`] = next[field];
      return `#${field} = :${field}`;
    });
    await unitOfWork(runtime, principal.teamId, (tx) => {
      tx.update(keys.plan(principal.teamId, planId), {
        expression: `SET ${sets.join(', ')}, revision = :revision`,
        condition: ['attribute_exists(pk)', revision.expression, change.condition?.expression].filter(Boolean).join(' AND '),
        names,
        values,
      });
      for (const type of change.events) tx.emit({ type, projectId: plan.project_id, data: { plan: next } });
    });
    const provider = change.sync ? project.payment_provider?.provider : undefined;
    return { next, sync: provider ? { stored: { ...item, ...next, revision: Number(item.revision ?? 0) + 1 }, provider } : null };
  }, { exhausted: () => new ProblemError('CONFLICT', `Plan ${planId} kept changing while this request ran; read it again and retry.`) });
  if (!written.sync) return written.next;
  return syncAfterWrite(runtime, principal.teamId, written.sync.stored, written.sync.provider, options);
}

// ---------------------------------------------------------------------------------------------------
// Delete
// ---------------------------------------------------------------------------------------------------

/**
 * Deletes a plan without live subscriptions, removing it from its project's plan set in the same
 * transaction (the catalogue has no `plan.deleted` event, so none is emitted). Errors: NOT_FOUND;
 * CONFLICT (live subscriptions — checked in the transaction too).
 */
export async function deletePlan(runtime: UnitOfWorkRuntime, principal: Principal, planId: string): Promise<{ id: string; deleted: true }> {
  return retryOnLostRace(async () => {
    const item = await loadPlan(runtime.store, principal, planId);
    const live = liveSubscriptionsOf(item);
    if (live > 0) throw new ProblemError('CONFLICT', `Plan ${planId} has ${live} live subscription(s); a plan can be deleted only without them (deactivate it to stop new ones).`);
    const revision = revisionCondition(item);
    return await unitOfWork(runtime, principal.teamId, (tx) => {
      tx.delete(keys.plan(principal.teamId, planId), {
        condition: ['attribute_exists(pk)', revision.expression, NO_LIVE_SUBSCRIPTIONS.expression].join(' AND '),
        values: { ...revision.values, ...NO_LIVE_SUBSCRIPTIONS.values },
      });
      tx.update(keys.project(principal.teamId, item.project_id as string), { expression: 'DELETE plan_ids :plan_id', condition: 'attribute_exists(pk)', values: { ':plan_id': new Set([planId]) } });
      return { id: planId, deleted: true as const };
    });
  }, { exhausted: () => new ProblemError('CONFLICT', `Plan ${planId} kept changing while it was being deleted; retry.`) });
}

// ---------------------------------------------------------------------------------------------------
// Provider sync (DESIGN D22)
// ---------------------------------------------------------------------------------------------------

/**
 * Syncs a plan to its project's connected payment provider now (`POST /v1/plans/{id}/sync`) and
 * returns the plan with the outcome recorded (`sync_status` `synced` with the provider's ids, or
 * `failed` with `sync_error`), having emitted `plan.synced` or `plan.sync_failed`. A failed sync is an
 * answer, not an error: it is recorded and visible. Errors: NOT_FOUND; CONFLICT (archived project, or no
 * provider connected).
 */
export async function syncPlan(runtime: SyncRuntime, principal: Principal, planId: string, options: SyncOptions = {}): Promise<Plan> {
  const item = await loadPlan(runtime.store, principal, planId);
  const project = await projectOfPlan(runtime.store, principal.teamId, toPlan(item));
  if (project.status === 'archived') throw archivedConflict(project, 'syncing a plan');
  if (!project.payment_provider) {
    throw new ProblemError('CONFLICT', `Project ${project.id} has no payment provider connected; connect one with PUT /v1/projects/${project.id}/payment-provider, then sync.`);
  }
  return performSync(runtime, principal.teamId, item, project.payment_provider.provider, options);
}

/** Syncs right after a committed write; never throws (the write stands; a failure to record is logged and the plan as written returned). */
async function syncAfterWrite(runtime: SyncRuntime, teamId: string, item: StoredPlan, provider: PaymentProvider, options: SyncOptions): Promise<Plan> {
  try {
    return await performSync(runtime, teamId, item, provider, options);
  } catch (error) {
    logger.error('plan sync not recorded', { plan_id: item.id as string, error: error as Error });
    return toPlan(item);
  }
}

/** Calls the provider (with retries of retryable failures), then records the outcome and its event, unless the plan changed meanwhile. */
async function performSync(runtime: SyncRuntime, teamId: string, item: StoredPlan, provider: PaymentProvider, options: SyncOptions): Promise<Plan> {
  const plan = toPlan(item);
  const result = await callProvider(runtime, plan, teamId, provider, options);
  const nowIso = isoTime(runtime.clock.nowMs());
  const next: Plan = result.ok
    ? { ...plan, sync_status: 'synced', payment_provider: provider, provider_product_id: result.provider_product_id, provider_price_id: result.provider_price_id, synced_at: nowIso, sync_error: null }
    : { ...plan, sync_status: 'failed', payment_provider: provider, sync_error: result.reason };
  const revision = revisionCondition(item);
  try {
    await unitOfWork(runtime, teamId, (tx) => {
      tx.update(keys.plan(teamId, plan.id), {
        expression: 'SET sync_status = :sync_status, payment_provider = :provider, provider_product_id = :product, provider_price_id = :price, synced_at = :synced_at, sync_error = :sync_error',
        condition: ['attribute_exists(pk)', revision.expression].join(' AND '),
        values: {
          ...revision.values,
          ':sync_status': next.sync_status,
          ':provider': next.payment_provider,
          ':product': next.provider_product_id,
          ':price': next.provider_price_id,
          ':synced_at': next.synced_at,
          ':sync_error': next.sync_error,
        },
      });
      if (result.ok) {
        tx.emit({ type: 'plan.synced', projectId: plan.project_id, data: { plan: next, payment_provider: provider, provider_product_id: result.provider_product_id, provider_price_id: result.provider_price_id } });
      } else {
        tx.emit({ type: 'plan.sync_failed', projectId: plan.project_id, data: { plan: next, payment_provider: provider, reason: result.reason, code: result.code ?? null } });
      }
    });
  } catch (error) {
    if (!isLostRace(error)) throw error;
    // The plan changed (or was deleted) while the provider was called: that change syncs on its own.
    const current = await runtime.store.get(keys.plan(teamId, plan.id));
    if (!current) throw planNotFound(plan.id);
    return toPlan(current);
  }
  return next;
}

/**
 * The provider's answer for a plan, called outside any transaction: retryable failures, and errors the
 * adapter throws (recorded without their message, which may carry provider internals), are tried again
 * per `options.retry` (default the runtime's `IntegrationSettings.retry`).
 */
async function callProvider(runtime: SyncRuntime, plan: Plan, teamId: string, provider: PaymentProvider, options: SyncOptions): Promise<PlanSyncResult> {
  const adapter = (options.adapters ?? { manual: manualPaymentProvider })[provider];
  if (!adapter) return { ok: false, reason: `No adapter for the payment provider ${provider} is available.`, code: null, retryable: false };
  const input: PlanForSync = {
    team_id: teamId,
    project_id: plan.project_id,
    plan_id: plan.id,
    name: plan.name,
    description: plan.description,
    amount: plan.amount,
    currency: plan.currency,
    interval: plan.interval,
    interval_count: plan.interval_count,
    access_days: plan.access_days,
    trial_days: plan.trial_days,
    price_version: plan.price_version,
    active: plan.status === 'active',
  };
  const existing = plan.payment_provider === provider ? { provider_product_id: plan.provider_product_id, provider_price_id: plan.provider_price_id } : null;
  const policy = options.retry ?? retryPolicyOf(runtime);
  return retryWhile(
    policy,
    async (): Promise<PlanSyncResult> => {
      try {
        return await adapter.syncPlan(input, existing);
      } catch (error) {
        // Only the error's class: a provider's message may carry account details or credentials.
        logger.warn('payment provider sync threw', { provider, plan_id: plan.id, error_name: error instanceof Error ? error.name : typeof error });
        return { ok: false, reason: `The ${provider} provider could not be reached.`, code: null, retryable: true };
      }
    },
    (result) => !result.ok && result.retryable,
  );
}
