import { ProblemError } from '../../errors.js';
import type { IntegrationRuntime } from '../../integrations.js';
import { logger } from '../../logger.js';
import { manualPaymentProvider } from '../../providers/manual.js';
import type { PaymentProviderAdapters, RefundRequest, RefundResult } from '../../providers/payment-provider.js';
import { retryPolicyOf, retryWhile, type RetryPolicy } from '../../retry.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import type { Payment } from './schema.js';

/** The refund call to a payment's provider (DESIGN D16, D23), outside any transaction. */

/**
 * Options of {@link refundPayment}: the provider adapters (the handler passes `paymentProviderAdapters(runtime)`,
 * Stripe included; the default is only `manual`, so this module never imports the Stripe SDK, DESIGN D23)
 * and the retry policy (default the runtime's `IntegrationSettings.retry`).
 */
export interface RefundOptions {
  adapters?: PaymentProviderAdapters;
  retry?: RetryPolicy;
}

/**
 * Refunds at the payment's provider outside any transaction, with retries and an idempotency key from the payment and
 * `reservationKey`; returns the refund id (null for `manual`). Errors: PROVIDER_UNAVAILABLE (unreachable after
 * retries); CONFLICT (refused, e.g. `charge_already_refunded`, or no credential). The payment is unchanged either way.
 */
export async function refundAtProvider(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  teamId: string,
  payment: Payment,
  amount: number,
  reason: string | null,
  reservationKey: string,
  options: RefundOptions,
): Promise<string | null> {
  const adapter = (options.adapters ?? { manual: manualPaymentProvider })[payment.provider];
  if (!adapter)
    throw new ProblemError(
      'PROVIDER_UNAVAILABLE',
      `No adapter for the payment provider ${payment.provider} is available; nothing was refunded.`,
    );
  const request: RefundRequest = {
    team_id: teamId,
    project_id: payment.project_id,
    payment_id: payment.id,
    provider_payment_id: payment.provider_payment_id,
    amount,
    currency: payment.currency,
    reason,
    idempotency_key: `refund-${payment.id}-${reservationKey}`,
  };
  const result = await retryWhile(
    options.retry ?? retryPolicyOf(runtime),
    async (): Promise<RefundResult> => {
      try {
        return await adapter.refund(request);
      } catch (error) {
        // Only the error's class: a provider's message may carry account details or credentials.
        logger.warn('payment provider refund threw', {
          provider: payment.provider,
          payment_id: payment.id,
          error_name: error instanceof Error ? error.name : typeof error,
        });
        return {
          ok: false,
          reason: `The ${payment.provider} provider could not be reached.`,
          code: null,
          retryable: true,
        };
      }
    },
    (outcome) => !outcome.ok && outcome.retryable,
  );
  if (result.ok) return result.provider_refund_id;
  if (result.retryable)
    throw new ProblemError('PROVIDER_UNAVAILABLE', `${result.reason} Payment ${payment.id} is unchanged; retry later.`);
  throw new ProblemError('CONFLICT', `${result.reason} Payment ${payment.id} is unchanged.`);
}
