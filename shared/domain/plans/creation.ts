import type { Principal } from '../../auth/principal.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { planStore } from '../../store/plans.js';
import { projectStore } from '../../store/projects.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { loadProject, planIdsOf, toProject } from '../projects/repository.js';
import { archivedConflict, priceVersionOf, requirePlanRoles, resolveTerms } from './decisions.js';
import type { StoredPlan } from './repository.js';
import { DEFAULT_GRACE_DAYS, MAX_PLANS_PER_PROJECT, type CreatePlanRequest, type Plan } from './schema.js';
import { syncAfterWrite, type SyncOptions, type SyncRuntime } from './sync.js';

/** Creation of subscription plans (DESIGN D6, D16), with the first provider sync when the project has one connected. */

/** A price that exists at the provider already (DESIGN D34): the plan is created `synced` with its ids, not synced. */
export interface ImportedPrice {
  /** The plan's id, the same on every try of one import (a second creation then fails: CONFLICT). */
  planId: string;
  provider: PaymentProvider;
  productId: string;
  priceId: string;
}

/**
 * Creates a plan in a project and emits `plan.created`, in one transaction with the project's plan set
 * (conditional on the project being active and below {@link MAX_PLANS_PER_PROJECT} plans). When the
 * project has a payment provider connected, the plan then syncs to it at once (`plan.synced` or
 * `plan.sync_failed`, recorded in its own unit of work); the answer is the plan after that attempt. With
 * `options.imported` it is created synced with the provider's ids and nothing is called.
 * Errors: NOT_FOUND (project); VALIDATION_FAILED (billing terms); CONFLICT (archived project, plan limit).
 */
export async function createPlan(
  runtime: SyncRuntime,
  principal: Principal,
  projectId: string,
  input: CreatePlanRequest,
  options: SyncOptions & { imported?: ImportedPrice } = {},
): Promise<Plan> {
  const imported = options.imported;
  const terms = resolveTerms(input);
  const planId = imported?.planId ?? newUuid();
  const { project, plan, stored } = await retryOnLostRace(
    async () => {
      const projectItem = await loadProject(runtime.store, principal, projectId);
      const project = toProject(projectItem);
      if (project.status === 'archived') throw archivedConflict(project, 'creating a plan');
      if (input.platform_role_ids) requirePlanRoles(project, input.platform_role_ids);
      if (planIdsOf(projectItem).length >= MAX_PLANS_PER_PROJECT)
        throw new ProblemError(
          'CONFLICT',
          `Project ${projectId} already has ${MAX_PLANS_PER_PROJECT} plans, the most it can; delete or reuse one.`,
        );
      const now = isoTime(runtime.clock.nowMs());
      const plan: Plan = {
        id: planId,
        project_id: projectId,
        name: input.name,
        description: input.description ?? null,
        ...terms,
        grace_days: input.grace_days ?? DEFAULT_GRACE_DAYS,
        allow_promotion_codes: input.allow_promotion_codes ?? false,
        status: input.status ?? 'active',
        price_version: 1,
        price_history: [priceVersionOf(1, terms, now)],
        sync_status: imported ? 'synced' : project.payment_provider ? 'pending' : 'not_synced',
        payment_provider: imported?.provider ?? null,
        provider_product_id: imported?.productId ?? null,
        provider_price_id: imported?.priceId ?? null,
        synced_at: imported ? now : null,
        sync_error: null,
        ...(input.platform_role_ids ? { platform_role_ids: [...new Set(input.platform_role_ids)] } : {}),
        created_at: now,
        updated_at: now,
      };
      const stored: StoredPlan = planStore.newItem(principal.teamId, plan);
      await unitOfWork(runtime, principal.teamId, (tx) => {
        planStore.create(tx, stored);
        projectStore.addPlan(tx, principal.teamId, projectId, planId, MAX_PLANS_PER_PROJECT);
        tx.emit({ type: 'plan.created', projectId, data: { plan } });
      });
      return { project, plan, stored };
    },
    {
      exhausted: () =>
        new ProblemError('CONFLICT', `Project ${projectId} kept changing while the plan was being created; retry.`),
    },
  );
  if (!project.payment_provider || imported) return plan;
  return syncAfterWrite(runtime, principal.teamId, stored, project.payment_provider.provider, options);
}
