import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import type { IntegrationRuntime } from '../../integrations.js';
import { logger } from '../../logger.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import type {
  PaymentProviderAdapters,
  ProviderSubscriptionChange,
  SubscriptionChangeRequest,
  SubscriptionChangeResult,
} from '../../providers/payment-provider.js';
import { retryPolicyOf, retryWhile, type RetryPolicy } from '../../retry.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser, revisionOf } from '../../store/records.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import type { Plan } from '../plans/schema.js';
import type { StoredSubscription } from './queries.js';
import type { Subscription } from './schema.js';
import type { Decision } from './transition-decisions.js';

/**
 * Provider-first subscription changes (DESIGN D27; money moves only with the provider's agreement): made at the
 * provider with an idempotency key BEFORE our transaction, so the echo event finds nothing to change; the transaction
 * moves `provider_change_created` so an older Stripe snapshot cannot undo it. Plan changes: upgrade `always_invoice`
 * (pays the difference now), downgrade `none` (lower price from the next renewal, no credit).
 */

/**
 * The stored attribute of a subscription item holding the provider's id of the subscription that bills it (Stripe
 * `sub_...`).
 */
export const PROVIDER_SUBSCRIPTION_ATTRIBUTE = 'provider_subscription_id';

/** The provider's subscription id a subscription item holds (absent on subscriptions no provider bills). */
const parseProviderSubscriptionId = recordParser(
  entity.subscription,
  z.object({ [PROVIDER_SUBSCRIPTION_ATTRIBUTE]: z.optional(z.string()) }),
);

/**
 * The link item's attribute holding the `created` (unix SECONDS) of our last provider-first change: events older than
 * it are stale.
 */
export const PROVIDER_CHANGE_CREATED_ATTRIBUTE = 'provider_change_created';

/**
 * The change the provider must make for `decision` on `subscription` (D15 trigger → provider call), or null
 * when the trigger does not touch billing (suspend, unsuspend, clock triggers). Pure.
 * Errors: CONFLICT when a plan change targets a plan not synced to the subscription's provider.
 */
export function providerChangeOf(subscription: Subscription, decision: Decision): ProviderSubscriptionChange | null {
  switch (decision.trigger) {
    case 'cancel':
      return { kind: 'cancel' };
    case 'cancel_at_period_end':
      return { kind: 'cancel_at_period_end' };
    case 'pause':
      return { kind: 'pause' };
    case 'resume':
      if (subscription.status === 'paused') return { kind: 'resume_collection' };
      if (subscription.status === 'pending_cancellation') return { kind: 'keep' };
      return null;
    case 'upgrade':
    case 'downgrade':
      return {
        kind: 'change_price',
        provider_price_id: syncedPriceOf(subscription, decision.newPlan!),
        proration_behavior: decision.trigger === 'upgrade' ? 'always_invoice' : 'none',
      };
    default:
      return null;
  }
}

/** The provider price of `plan` for the subscription's provider. Errors: CONFLICT naming the sync to run. */
function syncedPriceOf(subscription: Subscription, plan: Plan): string {
  if (plan.payment_provider === subscription.payment_provider && plan.provider_price_id) return plan.provider_price_id;
  throw new ProblemError(
    'CONFLICT',
    `Plan ${plan.id} is not synced to ${subscription.payment_provider}, which bills subscription ${subscription.id}; sync it first (POST /v1/plans/${plan.id}/sync), then change the plan.`,
  );
}

/**
 * Options of {@link applyAtProvider}: the adapters (default the runtime's) and the retry policy (default the
 * runtime's).
 */
export interface ProviderChangeOptions {
  adapters?: PaymentProviderAdapters;
  retry?: RetryPolicy;
}

/**
 * What {@link applyAtProvider} did: the provider call's target (the link to mark in the transaction), or null when the
 * provider had nothing to do.
 */
export interface ProviderChangeMade {
  provider: string;
  providerSubscriptionId: string;
}

/**
 * Makes `decision`'s change at the provider billing `item` (outside any transaction, retried; key: subscription,
 * revision, change); null when nothing to do. Errors: PROVIDER_UNAVAILABLE; VALIDATION_FAILED (refused: its message);
 * CONFLICT (plan not synced). The subscription is unchanged either way.
 */
export async function applyAtProvider(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  item: StoredSubscription,
  subscription: Subscription,
  decision: Decision,
  options: ProviderChangeOptions = {},
): Promise<ProviderChangeMade | null> {
  const providerSubscriptionId = parseProviderSubscriptionId(item)[PROVIDER_SUBSCRIPTION_ATTRIBUTE];
  const provider = subscription.payment_provider;
  if (!providerSubscriptionId || !provider) return null;
  const change = providerChangeOf(subscription, decision);
  if (!change) return null;
  const adapter = (options.adapters ?? paymentProviderAdapters(runtime))[provider];
  if (!adapter)
    throw new ProblemError(
      'PROVIDER_UNAVAILABLE',
      `No adapter for the payment provider ${provider} is available; subscription ${subscription.id} is unchanged.`,
    );
  const target = change.kind === 'change_price' ? `-${change.provider_price_id}` : '';
  const request: SubscriptionChangeRequest = {
    team_id: principal.teamId,
    project_id: subscription.project_id,
    subscription_id: subscription.id,
    provider_subscription_id: providerSubscriptionId,
    change,
    idempotency_key: `svc-subscription-${subscription.id}-r${revisionOf(entity.subscription, item)}-${change.kind}${target}`,
  };
  const result = await retryWhile(
    options.retry ?? retryPolicyOf(runtime),
    async (): Promise<SubscriptionChangeResult> => {
      try {
        return await adapter.changeSubscription(request);
      } catch (error) {
        // Only the error's class: a provider's message may carry account details or credentials.
        logger.warn('payment provider subscription change threw', {
          provider,
          subscription_id: subscription.id,
          error_name: error instanceof Error ? error.name : typeof error,
        });
        return { ok: false, reason: `The ${provider} provider could not be reached.`, code: null, retryable: true };
      }
    },
    (outcome) => !outcome.ok && outcome.retryable,
  );
  if (result.ok) return { provider, providerSubscriptionId };
  if (result.retryable)
    throw new ProblemError(
      'PROVIDER_UNAVAILABLE',
      `${result.reason} Subscription ${subscription.id} is unchanged; retry with the same Idempotency-Key.`,
    );
  throw new ProblemError('VALIDATION_FAILED', `${result.reason} Subscription ${subscription.id} is unchanged.`, {
    errors: [{ path: 'subscription', message: result.reason }],
  });
}
