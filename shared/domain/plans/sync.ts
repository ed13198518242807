import type { Principal } from '../../auth/principal.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { IntegrationRuntime } from '../../integrations.js';
import { logger } from '../../logger.js';
import { manualPaymentProvider } from '../../providers/manual.js';
import type { PaymentProviderAdapters, PlanForSync, PlanSyncResult } from '../../providers/payment-provider.js';
import { retryPolicyOf, retryWhile, type RetryPolicy } from '../../retry.js';
import { isLostRace } from '../../store/optimistic.js';
import { planStore } from '../../store/plans.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { archivedConflict } from './decisions.js';
import { loadPlan, planNotFound, projectOfPlan, toPlan, type StoredPlan } from './repository.js';
import type { Plan } from './schema.js';

/**
 * Provider sync of plans (DESIGN D22): the provider is called outside any transaction; its outcome
 * (`plan.synced` or `plan.sync_failed`) is recorded afterwards in one unit of work, only if the plan
 * did not change meanwhile (a later change syncs again).
 */

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

/**
 * Syncs a plan to its project's connected payment provider now (`POST /v1/plans/{id}/sync`) and
 * returns the plan with the outcome recorded (`sync_status` `synced` with the provider's ids, or
 * `failed` with `sync_error`), having emitted `plan.synced` or `plan.sync_failed`. A failed sync is an
 * answer, not an error: it is recorded and visible. Errors: NOT_FOUND; CONFLICT (archived project, or no
 * provider connected).
 */
export async function syncPlan(
  runtime: SyncRuntime,
  principal: Principal,
  planId: string,
  options: SyncOptions = {},
): Promise<Plan> {
  const { item, plan } = await loadPlan(runtime.store, principal, planId);
  const project = await projectOfPlan(runtime.store, principal.teamId, plan);
  if (project.status === 'archived') throw archivedConflict(project, 'syncing a plan');
  if (!project.payment_provider) {
    throw new ProblemError(
      'CONFLICT',
      `Project ${project.id} has no payment provider connected; connect one with PUT /v1/projects/${project.id}/payment-provider, then sync.`,
    );
  }
  return performSync(runtime, principal.teamId, item, project.payment_provider.provider, options);
}

/**
 * Syncs right after a committed write; never throws (the write stands; a failure to record is logged and the plan as
 * written returned).
 */
export async function syncAfterWrite(
  runtime: SyncRuntime,
  teamId: string,
  item: StoredPlan,
  provider: PaymentProvider,
  options: SyncOptions,
): Promise<Plan> {
  try {
    return await performSync(runtime, teamId, item, provider, options);
  } catch (error) {
    const plan = toPlan(item);
    logger.error('plan sync not recorded', { plan_id: plan.id, error: error as Error });
    return plan;
  }
}

/**
 * Calls the provider (with retries of retryable failures), then records the outcome and its event, unless the plan
 * changed meanwhile.
 */
async function performSync(
  runtime: SyncRuntime,
  teamId: string,
  item: StoredPlan,
  provider: PaymentProvider,
  options: SyncOptions,
): Promise<Plan> {
  const plan = toPlan(item);
  const result = await callProvider(runtime, plan, teamId, provider, options);
  const nowIso = isoTime(runtime.clock.nowMs());
  const next: Plan = result.ok
    ? {
        ...plan,
        sync_status: 'synced',
        payment_provider: provider,
        provider_product_id: result.provider_product_id,
        provider_price_id: result.provider_price_id,
        synced_at: nowIso,
        sync_error: null,
      }
    : { ...plan, sync_status: 'failed', payment_provider: provider, sync_error: result.reason };
  try {
    await unitOfWork(runtime, teamId, (tx) => {
      planStore.writeSyncOutcome(tx, teamId, item, next);
      if (result.ok) {
        tx.emit({
          type: 'plan.synced',
          projectId: plan.project_id,
          data: {
            plan: next,
            payment_provider: provider,
            provider_product_id: result.provider_product_id,
            provider_price_id: result.provider_price_id,
          },
        });
      } else {
        tx.emit({
          type: 'plan.sync_failed',
          projectId: plan.project_id,
          data: { plan: next, payment_provider: provider, reason: result.reason, code: result.code ?? null },
        });
      }
    });
  } catch (error) {
    if (!isLostRace(error)) throw error;
    // The plan changed (or was deleted) while the provider was called: that change syncs on its own.
    const current = await planStore.read(runtime.store, teamId, plan.id);
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
async function callProvider(
  runtime: SyncRuntime,
  plan: Plan,
  teamId: string,
  provider: PaymentProvider,
  options: SyncOptions,
): Promise<PlanSyncResult> {
  const adapter = (options.adapters ?? { manual: manualPaymentProvider })[provider];
  if (!adapter)
    return {
      ok: false,
      reason: `No adapter for the payment provider ${provider} is available.`,
      code: null,
      retryable: false,
    };
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
  const existing =
    plan.payment_provider === provider
      ? { provider_product_id: plan.provider_product_id, provider_price_id: plan.provider_price_id }
      : null;
  const policy = options.retry ?? retryPolicyOf(runtime);
  return retryWhile(
    policy,
    async (): Promise<PlanSyncResult> => {
      try {
        return await adapter.syncPlan(input, existing);
      } catch (error) {
        // Only the error's class: a provider's message may carry account details or credentials.
        logger.warn('payment provider sync threw', {
          provider,
          plan_id: plan.id,
          error_name: error instanceof Error ? error.name : typeof error,
        });
        return { ok: false, reason: `The ${provider} provider could not be reached.`, code: null, retryable: true };
      }
    },
    (result) => !result.ok && result.retryable,
  );
}
