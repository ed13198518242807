import { createHash, randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import { logger } from '../../logger.js';
import type {
  CheckoutSessionRequest,
  CheckoutSessionResult,
  PaymentProviderAdapter,
  PaymentProviderAdapters,
} from '../../providers/payment-provider.js';
import { retryPolicyOf, retryWhile, type RetryPolicy } from '../../retry.js';
import type { Store } from '../../store/store.js';
import { trialUseStore } from '../../store/subscriptions/trials.js';
import { redeemableCode } from '../coupons/redemption.js';
import { archivedConflict } from '../plans/decisions.js';
import { loadPlan, projectOfPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import type { Project } from '../projects/schema.js';
import type { CheckoutSession } from './schema.js';

/** What starting a checkout needs of the buyer and the caller (DESIGN D26); every field optional. */
export interface CheckoutInput {
  customerEmail?: string | null;
  /** Absolute URL; default `${publicBaseUrl}/join/{project_id}/welcome?session_id={CHECKOUT_SESSION_ID}`. */
  successUrl?: string | null;
  /** Absolute URL; default `${publicBaseUrl}/join/{project_id}`. */
  cancelUrl?: string | null;
  /** Whether to start the plan's trial (default true; false sells the plan without it, D33). */
  trial?: boolean;
  /** Our reference of the buyer (Stripe `client_reference_id`). */
  clientReferenceId?: string | null;
  /** A promotion code of the project, as typed (D33): checked here, applied and billed by Stripe. */
  promotionCode?: string | null;
  /**
   * The caller's idempotency key (the request's `Idempotency-Key`): the same key and input give the same provider
   * session. Null: a new session every time.
   */
  idempotencyKey?: string | null;
}

/**
 * The adapters (the handler passes `paymentProviderAdapters(runtime)`, so this module never imports the Stripe SDK,
 * D23) and the retry policy (default the runtime's).
 */
export interface CheckoutOptions {
  adapters: PaymentProviderAdapters;
  retry?: RetryPolicy;
}

/**
 * The default redirect URLs, or VALIDATION_FAILED naming the missing ones when the service's public base URL is
 * unknown.
 */
export function redirectUrls(
  runtime: IntegrationRuntime,
  projectId: string,
  input: CheckoutInput,
): { success: string; cancel: string } {
  const base = integrationsOf(runtime).publicBaseUrl;
  const success =
    input.successUrl ?? (base ? `${base}/join/${projectId}/welcome?session_id={CHECKOUT_SESSION_ID}` : null);
  const cancel = input.cancelUrl ?? (base ? `${base}/join/${projectId}` : null);
  if (success && cancel) return { success, cancel };
  const missing = [success ? null : 'success_url', cancel ? null : 'cancel_url'].filter(
    (path): path is string => path !== null,
  );
  throw new ProblemError(
    'VALIDATION_FAILED',
    'The service has no public base URL (PUBLIC_BASE_URL), so there are no default join pages: send success_url and cancel_url.',
    {
      errors: missing.map((path) => ({ path, message: 'required while the service has no public base URL' })),
    },
  );
}

/** The request field a used trial is refused on (`trial`). */
const TRIAL_FIELD = 'trial';

/**
 * The CONFLICT of a trial checkout for an e-mail that already had its trial in the project (D33: one per subscriber per
 * project): the field error on `trial` is what the join page recognises to offer the plan without its trial.
 */
export function trialUsedConflict(planId: string): ProblemError {
  return new ProblemError(
    'CONFLICT',
    `This e-mail address already had its free trial in this project (one per subscriber); buy plan ${planId} without a trial with trial: false.`,
    { errors: [{ path: TRIAL_FIELD, message: 'the e-mail address already had its trial; send trial: false' }] },
  );
}

/** Whether `problem` is {@link trialUsedConflict}'s (the join page then offers the plan without its trial). */
export function isTrialUsed(problem: { code: string; errors?: readonly { path: string }[] }): boolean {
  return problem.code === 'CONFLICT' && (problem.errors ?? []).some((error) => error.path === TRIAL_FIELD);
}

/**
 * The trial days a checkout of `plan` starts (D33, pure): the plan's for a recurring plan when `trial` is not false,
 * else 0.
 */
export function checkoutTrialDays(plan: Pick<Plan, 'interval' | 'trial_days'>, trial: boolean | undefined): number {
  return plan.interval === 'one_time' || trial === false ? 0 : plan.trial_days;
}

/**
 * The plan `planId` when it can be sold through Stripe Checkout now (D26, D33), with its project and the Stripe
 * adapter. Errors: NOT_FOUND; CONFLICT (archived project, inactive or free plan, no Stripe, not synced);
 * PROVIDER_UNAVAILABLE (no adapter).
 */
export async function sellablePlan(
  store: Store,
  principal: Principal,
  planId: string,
  adapters: PaymentProviderAdapters,
): Promise<{ plan: Plan & { provider_price_id: string }; project: Project; adapter: PaymentProviderAdapter }> {
  const { plan } = await loadPlan(store, principal, planId);
  const project = await projectOfPlan(store, principal.teamId, plan);
  if (project.status === 'archived') throw archivedConflict(project, 'selling a plan');
  if (plan.status !== 'active')
    throw new ProblemError(
      'CONFLICT',
      `Plan ${plan.id} is inactive: it is closed to new subscriptions; activate it first (POST /v1/plans/${plan.id}/activate).`,
    );
  if (plan.amount <= 0)
    throw new ProblemError(
      'CONFLICT',
      `Plan ${plan.id} is free: there is nothing to pay; grant it with POST /v1/projects/${project.id}/subscriptions instead of a checkout.`,
    );
  if (project.payment_provider?.provider !== 'stripe') {
    throw new ProblemError(
      'CONFLICT',
      `Project ${project.id} is not connected to Stripe; connect it with PUT /v1/projects/${project.id}/payment-provider, then sync the plan with POST /v1/plans/${plan.id}/sync.`,
    );
  }
  if (plan.payment_provider !== 'stripe' || !plan.provider_price_id || plan.sync_status !== 'synced') {
    throw new ProblemError(
      'CONFLICT',
      `Plan ${plan.id} is not synced to Stripe (sync status ${plan.sync_status}); sync it with POST /v1/plans/${plan.id}/sync, then try again.`,
    );
  }
  const adapter = adapters.stripe;
  if (!adapter)
    throw new ProblemError('PROVIDER_UNAVAILABLE', 'No Stripe adapter is available; no checkout was created.');
  return { plan: { ...plan, provider_price_id: plan.provider_price_id }, project, adapter };
}

/**
 * Starts a hosted Stripe checkout (D26), storing nothing (the subscription comes with `checkout.session.completed`);
 * with the plan's trial unless `trial` is false, card-less when the plan allows it (D33); a promotion code is checked
 * here and applied by Stripe. Errors: NOT_FOUND; CONFLICT (archived, inactive/free plan, no Stripe, not synced, the
 * e-mail's trial used); VALIDATION_FAILED (no redirect URL, Stripe's refusal); PROVIDER_UNAVAILABLE.
 */
export async function startCheckout(
  runtime: { store: Store; clock: Clock } & IntegrationRuntime,
  principal: Principal,
  planId: string,
  input: CheckoutInput,
  options: CheckoutOptions,
): Promise<CheckoutSession> {
  const { plan, project, adapter } = await sellablePlan(runtime.store, principal, planId, options.adapters);
  const urls = redirectUrls(runtime, project.id, input);
  const trialDays = checkoutTrialDays(plan, input.trial);
  if (
    trialDays > 0 &&
    input.customerEmail &&
    (await trialUseStore.hadTrial(runtime.store, principal.teamId, project.id, input.customerEmail))
  )
    throw trialUsedConflict(plan.id);
  const offer = input.promotionCode
    ? await redeemableCode(
        runtime.store,
        principal.teamId,
        project.id,
        input.promotionCode,
        plan,
        runtime.clock.nowMs(),
      )
    : null;
  if (offer && !offer.code.provider_promotion_code_id)
    throw new ProblemError(
      'VALIDATION_FAILED',
      `The code ${offer.code.code} is not known to Stripe (it was made before the project connected Stripe); make a new code.`,
      {
        errors: [{ path: 'promotion_code', message: 'not known to Stripe' }],
      },
    );
  const fields = {
    mode: plan.interval === 'one_time' ? 'payment' : 'subscription',
    trial_days: trialDays,
    trial_payment_method_required: plan.trial_payment_method_required,
    customer_email: input.customerEmail ?? null,
    client_reference_id: input.clientReferenceId ?? null,
    success_url: urls.success,
    cancel_url: urls.cancel,
    promotion_code: offer?.code.code ?? null,
    provider_promotion_code_id: offer?.code.provider_promotion_code_id ?? null,
    allow_promotion_codes: plan.allow_promotion_codes && !offer,
  } as const;
  // The same caller key, plan price and fields give the same Stripe session (a retry after a lost answer);
  // without a caller key every call is a new checkout (two buyers never share one).
  const keyMaterial = input.idempotencyKey
    ? JSON.stringify([
        principal.teamId,
        input.idempotencyKey,
        plan.id,
        plan.price_version,
        plan.provider_price_id,
        fields,
      ])
    : randomUUID();
  const request: CheckoutSessionRequest = {
    team_id: principal.teamId,
    project_id: project.id,
    plan_id: plan.id,
    provider_price_id: plan.provider_price_id,
    ...fields,
    idempotency_key: `checkout-${createHash('sha256').update(keyMaterial).digest('hex').slice(0, 40)}`,
  };
  const result = await createSession(runtime, options.retry, plan.id, () => adapter.createCheckoutSession(request));
  return { id: result.id, url: result.url, expires_at: result.expires_at, plan_id: plan.id, project_id: project.id };
}

/**
 * Creates a provider checkout session with `create`, retried per `retry` (default the runtime's) while it fails
 * retryably (a throw counts as "Stripe could not be reached"; only the error's class is logged). Errors:
 * PROVIDER_UNAVAILABLE (still failing), VALIDATION_FAILED (the provider's refusal, with its reason).
 */
export async function createSession(
  runtime: IntegrationRuntime,
  retry: RetryPolicy | undefined,
  planId: string,
  create: () => Promise<CheckoutSessionResult>,
): Promise<Extract<CheckoutSessionResult, { ok: true }>> {
  const result = await retryWhile(
    retry ?? retryPolicyOf(runtime),
    async (): Promise<CheckoutSessionResult> => {
      try {
        return await create();
      } catch (error) {
        // Only the error's class: a provider's message may carry account details.
        logger.warn('checkout session creation threw', {
          plan_id: planId,
          error_name: error instanceof Error ? error.name : typeof error,
        });
        return { ok: false, reason: 'Stripe could not be reached.', code: null, retryable: true };
      }
    },
    (outcome) => !outcome.ok && outcome.retryable,
  );
  if (result.ok) return result;
  if (result.retryable)
    throw new ProblemError('PROVIDER_UNAVAILABLE', `${result.reason} No checkout was created; retry later.`);
  throw new ProblemError('VALIDATION_FAILED', `Stripe refused the checkout: ${result.reason}`, {
    errors: [{ path: 'body', message: result.reason }],
  });
}
