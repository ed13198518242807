import type { WebhookEventName } from '../../catalogues/webhook-events.js';
import { ProblemError, type FieldError } from '../../errors.js';
import type { Project } from '../projects/schema.js';
import type { Condition } from '../../store/expressions.js';
import {
  MAX_INTERVAL_COUNT,
  MAX_PRICE_VERSIONS,
  type Plan,
  type PlanInterval,
  type PlanPriceVersion,
  type PlanStatus,
  type UpdatePlanRequest,
} from './schema.js';

/**
 * The decisions of plan changes (DESIGN D16), pure: billing terms, and from a plan as read (with its
 * project and live subscription count) to the change to write. No Store: the caller loads, decides and
 * commits conditional on the revision read, again on a lost race.
 */

/**
 * A plan's price and billing terms (the fields a price version holds) plus its trial (D33: whether it needs a card).
 */
export interface Terms {
  amount: number;
  currency: string;
  interval: PlanInterval;
  interval_count: number;
  access_days: number | null;
  trial_days: number;
  trial_payment_method_required: boolean;
}

const PRICE_FIELDS = ['amount', 'currency', 'interval', 'interval_count', 'access_days'] as const;

/**
 * Merges requested terms over the current ones (none for a new plan) and checks the cross-field rules:
 * `one_time` needs `access_days`, has `interval_count` 1 and no trial; recurring plans have no
 * `access_days` and at most 52 weeks, 12 months or 1 year per period. Switching interval without
 * `interval_count` resets it to 1; switching to recurring clears `access_days`, to one_time clears the
 * trial (and its card choice, back to required). Errors: VALIDATION_FAILED with the offending fields.
 */
export function resolveTerms(
  requested: Partial<Omit<Terms, 'access_days'>> & { access_days?: number | null },
  current?: Terms,
): Terms {
  const interval = requested.interval ?? current?.interval ?? 'month';
  const intervalChanged = current !== undefined && interval !== current.interval;
  const oneTime = interval === 'one_time';
  const terms: Terms = {
    amount: requested.amount ?? current?.amount ?? 0,
    currency: requested.currency ?? current?.currency ?? 'USD',
    interval,
    interval_count: requested.interval_count ?? (current && !intervalChanged ? current.interval_count : 1),
    access_days:
      requested.access_days !== undefined ? requested.access_days : oneTime ? (current?.access_days ?? null) : null,
    trial_days: requested.trial_days ?? (oneTime ? 0 : (current?.trial_days ?? 0)),
    trial_payment_method_required:
      requested.trial_payment_method_required ?? (oneTime ? true : (current?.trial_payment_method_required ?? true)),
  };
  const errors: FieldError[] = [];
  if (oneTime) {
    if (terms.access_days === null)
      errors.push({ path: 'access_days', message: 'required for a one_time plan (days of access it grants)' });
    if (terms.interval_count !== 1) errors.push({ path: 'interval_count', message: 'must be 1 for a one_time plan' });
    if (terms.trial_days !== 0) errors.push({ path: 'trial_days', message: 'a one_time plan has no trial' });
    if (!terms.trial_payment_method_required)
      errors.push({
        path: 'trial_payment_method_required',
        message: 'a one_time plan has no trial to start without a card',
      });
  } else {
    if (requested.access_days !== undefined && requested.access_days !== null)
      errors.push({ path: 'access_days', message: 'only one_time plans take access_days' });
    const most = MAX_INTERVAL_COUNT[interval];
    if (terms.interval_count > most)
      errors.push({
        path: 'interval_count',
        message: `at most ${most} for interval ${interval} (a billing period is at most one year)`,
      });
  }
  if (errors.length)
    throw new ProblemError(
      'VALIDATION_FAILED',
      `The plan\u2019s billing terms are inconsistent: ${errors.map((error) => `${error.path} ${error.message}`).join('; ')}.`,
      { errors },
    );
  return terms;
}

const termsOf = (plan: Plan): Terms => ({
  amount: plan.amount,
  currency: plan.currency,
  interval: plan.interval,
  interval_count: plan.interval_count,
  access_days: plan.access_days,
  trial_days: plan.trial_days,
  trial_payment_method_required: plan.trial_payment_method_required,
});
/** A `price_history` entry: price version `version` of `terms` (minor units), effective from `effectiveFrom` (ISO). */
export const priceVersionOf = (version: number, terms: Terms, effectiveFrom: string): PlanPriceVersion => ({
  version,
  amount: terms.amount,
  currency: terms.currency,
  interval: terms.interval,
  interval_count: terms.interval_count,
  access_days: terms.access_days,
  effective_from: effectiveFrom,
});

/**
 * Checks a plan's `platform_role_ids` (DESIGN D28): each must be a linked `role` resource of `project`.
 * Errors: VALIDATION_FAILED naming the ids that are not.
 */
export function requirePlanRoles(project: Project, roleIds: readonly string[]): void {
  const linked = new Set(
    project.resources.filter((resource) => resource.kind === 'role').map((resource) => resource.platform_resource_id),
  );
  const unknown = roleIds.filter((roleId) => !linked.has(roleId));
  if (unknown.length > 0) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      `Not linked roles of project ${project.id}: ${unknown.join(', ')}; link them first (POST /v1/projects/${project.id}/resources, kind role).`,
      {
        errors: [{ path: 'platform_role_ids', message: `not linked roles: ${unknown.join(', ')}` }],
      },
    );
  }
}

/** CONFLICT for `what` (e.g. `creating a plan`) in archived `project`, naming the unarchive operation. */
export const archivedConflict = (project: Project, what: string) =>
  new ProblemError(
    'CONFLICT',
    `Project ${project.id} is archived: ${what} is not allowed; unarchive it first (POST /v1/projects/${project.id}/unarchive).`,
  );

/**
 * A condition a plan change adds to its write: no live subscriptions (an in-place price edit). Opaque to
 * the domain: the plan store's `NO_LIVE_SUBSCRIPTIONS`, passed in by the caller and back to the store.
 */
export type ChangeCondition = Condition;

/** What a plan change decided: the plan to write, its events, an extra condition, and whether to sync afterwards. */
export interface PlanChange {
  next: Plan;
  events: WebhookEventName[];
  condition?: ChangeCondition;
  sync: boolean;
}

/**
 * The change `input` makes to `plan` (see `updatePlan`): null when it changes nothing; `live` is the
 * plan's live subscription count, `noLive` the condition an in-place price edit is written under.
 * Errors: VALIDATION_FAILED (billing terms); CONFLICT (activating in an archived project,
 * {@link MAX_PRICE_VERSIONS} versions).
 */
export function decidePlanUpdate(
  plan: Plan,
  project: Project,
  live: number,
  input: UpdatePlanRequest,
  nowIso: string,
  noLive: ChangeCondition,
): PlanChange | null {
  const terms = resolveTerms(
    {
      amount: input.amount,
      currency: input.currency,
      interval: input.interval,
      interval_count: input.interval_count,
      access_days: input.access_days,
      trial_days: input.trial_days,
      trial_payment_method_required: input.trial_payment_method_required,
    },
    termsOf(plan),
  );
  const next: Plan = { ...plan, ...terms };
  if (input.name !== undefined) next.name = input.name;
  if (input.grace_days !== undefined) next.grace_days = input.grace_days;
  if (input.allow_promotion_codes !== undefined) next.allow_promotion_codes = input.allow_promotion_codes;
  if (input.description !== undefined) next.description = input.description;
  if (input.status !== undefined) next.status = input.status;
  if (input.platform_role_ids !== undefined) {
    if (input.platform_role_ids !== null) requirePlanRoles(project, input.platform_role_ids);
    // undefined (every linked role) is removed from the stored plan.
    next.platform_role_ids = input.platform_role_ids === null ? undefined : [...new Set(input.platform_role_ids)];
  }
  const priceChanged = PRICE_FIELDS.some((field) => next[field] !== plan[field]);
  const listedChanged =
    priceChanged ||
    next.name !== plan.name ||
    next.description !== plan.description ||
    next.trial_days !== plan.trial_days;
  const statusChanged = next.status !== plan.status;
  const rolesChanged =
    JSON.stringify(next.platform_role_ids ?? null) !== JSON.stringify(plan.platform_role_ids ?? null);
  // The grace period, a trial's card choice and typed promotion codes are the service's own (not listed at the
  // provider): no price version, no sync (Checkout asks for the card or not when the session is created).
  const graceChanged =
    next.grace_days !== plan.grace_days ||
    next.trial_payment_method_required !== plan.trial_payment_method_required ||
    next.allow_promotion_codes !== plan.allow_promotion_codes;
  if (!listedChanged && !statusChanged && !rolesChanged && !graceChanged) return null;
  if (statusChanged && next.status === 'active' && project.status === 'archived')
    throw archivedConflict(project, 'activating a plan');
  let condition: ChangeCondition | undefined;
  if (priceChanged) {
    if (live > 0) {
      if (plan.price_history.length >= MAX_PRICE_VERSIONS) {
        throw new ProblemError(
          'CONFLICT',
          `Plan ${plan.id} already has ${MAX_PRICE_VERSIONS} price versions; create a new plan for this price.`,
        );
      }
      next.price_version = plan.price_version + 1;
      next.price_history = [...plan.price_history, priceVersionOf(next.price_version, terms, nowIso)];
    } else {
      next.price_history = [
        ...plan.price_history.filter((entry) => entry.version !== plan.price_version),
        priceVersionOf(plan.price_version, terms, nowIso),
      ];
      condition = noLive;
    }
  }
  if (listedChanged && (project.payment_provider || plan.sync_status !== 'not_synced')) next.sync_status = 'pending';
  const events: WebhookEventName[] = [];
  if (listedChanged || rolesChanged || graceChanged) events.push('plan.updated');
  if (statusChanged) events.push(next.status === 'active' ? 'plan.activated' : 'plan.deactivated');
  return { next, events, condition, sync: listedChanged };
}

/**
 * The change of `plan`'s status to `status` (see `setPlanStatus`). Errors: CONFLICT (already in that status, or
 * activating in an archived project).
 */
export function decidePlanStatus(plan: Plan, project: Project, status: PlanStatus): PlanChange {
  if (plan.status === status) {
    throw new ProblemError(
      'CONFLICT',
      `Plan ${plan.id} is already ${status}; ${status === 'active' ? 'deactivate' : 'activate'} is the action it allows.`,
    );
  }
  if (status === 'active' && project.status === 'archived') throw archivedConflict(project, 'activating a plan');
  return {
    next: { ...plan, status },
    events: [status === 'active' ? 'plan.activated' : 'plan.deactivated'],
    sync: false,
  };
}
