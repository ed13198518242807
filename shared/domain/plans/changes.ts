import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { entity } from '../../store/keys.js';
import { revisionOf } from '../../store/records.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { NO_LIVE_SUBSCRIPTIONS, planStore } from '../../store/plans.js';
import { projectStore } from '../../store/projects.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { liveSubscriptionsOf } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import { decidePlanStatus, decidePlanUpdate, type PlanChange } from './decisions.js';
import { loadPlan, projectOfPlan, type StoredPlan } from './repository.js';
import type { Plan, PlanStatus, UpdatePlanRequest } from './schema.js';
import { syncAfterWrite, type SyncOptions, type SyncRuntime } from './sync.js';

/**
 * Changes of subscription plans (DESIGN D6, D14, D16): update, activate, deactivate, delete; each decided by
 * decisions.ts.
 */

/**
 * Changes a plan (D16) with `plan.updated`/`plan.activated`/`plan.deactivated`; with live subscriptions a price change
 * adds a version; provider-listed changes sync after the transaction. Errors: NOT_FOUND, VALIDATION_FAILED, CONFLICT
 * (archived project, {@link MAX_PRICE_VERSIONS} versions, lost race).
 */
export async function updatePlan(
  runtime: SyncRuntime,
  principal: Principal,
  planId: string,
  input: UpdatePlanRequest,
  options: SyncOptions = {},
): Promise<Plan> {
  return changePlan(runtime, principal, planId, options, (plan, project, item, nowIso) =>
    decidePlanUpdate(plan, project, liveSubscriptionsOf(item), input, nowIso, NO_LIVE_SUBSCRIPTIONS),
  );
}

/**
 * Sets a plan's status (`POST /v1/plans/{id}/activate|deactivate`) and emits `plan.activated` /
 * `plan.deactivated`. Errors: NOT_FOUND; CONFLICT (already in that status, or activating in an
 * archived project).
 */
export async function setPlanStatus(
  runtime: SyncRuntime,
  principal: Principal,
  planId: string,
  status: PlanStatus,
): Promise<Plan> {
  return changePlan(runtime, principal, planId, {}, (plan, project) => decidePlanStatus(plan, project, status));
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
  const written = await retryOnLostRace(
    async () => {
      const { item, plan } = await loadPlan(runtime.store, principal, planId);
      const project = await projectOfPlan(runtime.store, principal.teamId, plan);
      const nowIso = isoTime(runtime.clock.nowMs());
      const change = decide(plan, project, item, nowIso);
      if (!change) return { next: plan, sync: null };
      const next: Plan = { ...change.next, updated_at: nowIso };
      await unitOfWork(runtime, principal.teamId, (tx) => {
        planStore.writeChange(tx, principal.teamId, item, next, change.condition);
        for (const type of change.events) tx.emit({ type, projectId: plan.project_id, data: { plan: next } });
      });
      const provider = change.sync ? project.payment_provider?.provider : undefined;
      return {
        next,
        sync: provider ? { stored: { ...item, ...next, revision: revisionOf(entity.plan, item) + 1 }, provider } : null,
      };
    },
    {
      exhausted: () =>
        new ProblemError('CONFLICT', `Plan ${planId} kept changing while this request ran; read it again and retry.`),
    },
  );
  if (!written.sync) return written.next;
  return syncAfterWrite(runtime, principal.teamId, written.sync.stored, written.sync.provider, options);
}

/**
 * Deletes a plan without live subscriptions, removing it from its project's plan set in the same
 * transaction (the catalogue has no `plan.deleted` event, so none is emitted). Errors: NOT_FOUND;
 * CONFLICT (live subscriptions — checked in the transaction too).
 */
export async function deletePlan(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  planId: string,
): Promise<{ id: string; deleted: true }> {
  return retryOnLostRace(
    async () => {
      const { item, plan } = await loadPlan(runtime.store, principal, planId);
      const live = liveSubscriptionsOf(item);
      if (live > 0)
        throw new ProblemError(
          'CONFLICT',
          `Plan ${planId} has ${live} live subscription(s); a plan can be deleted only without them (deactivate it to stop new ones).`,
        );
      return await unitOfWork(runtime, principal.teamId, (tx) => {
        planStore.delete(tx, principal.teamId, item, planId);
        projectStore.removePlan(tx, principal.teamId, plan.project_id, planId);
        return { id: planId, deleted: true as const };
      });
    },
    {
      exhausted: () => new ProblemError('CONFLICT', `Plan ${planId} kept changing while it was being deleted; retry.`),
    },
  );
}
