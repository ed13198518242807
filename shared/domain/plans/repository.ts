import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { planStore } from '../../store/plans.js';
import { projectStore } from '../../store/projects.js';
import type { Item } from '../../store/requests.js';
import { toProject } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import { parseStoredPlan } from './record.js';
import { DEFAULT_GRACE_DAYS, type ListPlansQuery, type Plan } from './schema.js';

/**
 * Plan reads (DESIGN D6, D14, D16, D22); writes live in creation.ts, changes.ts (pure decisions.ts) and sync.ts. Items:
 * `TEAM#<team>`/`PLAN#<uuid>`, listed per project through a sparse GSI; the project's `plan_ids` bound them. `revision`
 * guards every change; `live_subscription_count` > 0 blocks deletion and makes price changes add a version. Provider
 * sync (D22) runs outside transactions and records its outcome only if the plan did not change meanwhile.
 */

/**
 * The stored plan item as read: the public fields plus `revision` and `live_subscription_count`, read through `toPlan`
 * and `revisionOf` (never cast).
 */
export type StoredPlan = Item;

/** NOT_FOUND for a plan id (absent, foreign or out of scope: the same answer). */
export const planNotFound = (planId: string) => new ProblemError('NOT_FOUND', `No plan ${planId}.`);

/**
 * The public plan of a stored item (parsed through its stored-record schema; older items' absent fields get their
 * defaults).
 */
export function toPlan(item: Item): Plan {
  const stored = parseStoredPlan(item);
  return {
    ...stored,
    description: stored.description ?? null,
    access_days: stored.access_days ?? null,
    trial_days: stored.trial_days ?? 0,
    trial_payment_method_required: stored.trial_payment_method_required ?? true,
    grace_days: stored.grace_days ?? DEFAULT_GRACE_DAYS,
    allow_promotion_codes: stored.allow_promotion_codes ?? false,
    price_history: stored.price_history ?? [],
    sync_status: stored.sync_status ?? 'not_synced',
    payment_provider: stored.payment_provider ?? null,
    provider_product_id: stored.provider_product_id ?? null,
    provider_price_id: stored.provider_price_id ?? null,
    synced_at: stored.synced_at ?? null,
    sync_error: stored.sync_error ?? null,
  };
}

/**
 * The stored plan item of the principal's team (strongly consistent) and its public plan. Errors:
 * NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
export async function loadPlan(
  store: Store,
  principal: Principal,
  planId: string,
): Promise<{ item: StoredPlan; plan: Plan }> {
  const item = await planStore.read(store, principal.teamId, planId);
  const plan = item ? toPlan(item) : null;
  if (!item || !plan || !canAccessProject(principal, plan.project_id)) throw planNotFound(planId);
  return { item, plan };
}

/**
 * The project of a plan the caller may see (strongly consistent). Errors: NOT_FOUND naming the plan when the project is
 * gone.
 */
export async function projectOfPlan(store: Store, teamId: string, plan: Plan): Promise<Project> {
  const item = await projectStore.read(store, teamId, plan.project_id);
  if (!item) throw planNotFound(plan.id);
  return toProject(item);
}

/**
 * Reads one plan by id within the principal's team (`GET /v1/plans/{id}`; also what access codes and
 * subscriptions use to resolve a plan id). Errors: NOT_FOUND when absent, of another team, or of a
 * project outside the token's project scope (`scope:project:<uuid>`).
 */
export async function getPlan(store: Store, principal: Principal, planId: string): Promise<Plan> {
  return (await loadPlan(store, principal, planId)).plan;
}

/**
 * Lists a project's plans in creation order, paged (DESIGN D12), optionally only those with `status`
 * (applied by DynamoDB, so a page may be short while `next_cursor` is set).
 * Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED for a cursor of another list.
 */
export async function listPlans(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Pick<ListPlansQuery, 'limit' | 'cursor' | 'status'>,
): Promise<Page<Plan>> {
  requireProjectAccess(principal, projectId);
  const [exists, page] = await Promise.all([
    projectStore.exists(store, principal.teamId, projectId),
    planStore.listPage(store, principal.teamId, projectId, query, toPlan),
  ]);
  if (!exists) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return page;
}

/**
 * The active plans of a project the caller has already found (at most `limit`, in creation order; one Query, no
 * existence check): the join pages' list (DESIGN D26).
 */
export async function listActivePlansOfProject(
  store: Store,
  teamId: string,
  projectId: string,
  limit = 100,
): Promise<Plan[]> {
  const page = await planStore.listPage(store, teamId, projectId, { limit, status: 'active' }, toPlan);
  return page.data.filter((plan) => plan.status === 'active');
}
