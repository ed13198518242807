import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { IntegrationRuntime } from '../../integrations.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { changeSubscriptionWith } from '../subscriptions/transitions.js';
import type { Subscription } from '../subscriptions/schema.js';
import type { SubscriptionTrigger } from '../subscriptions/state-machine.js';
import { decideSettlement, refundAmount } from './decisions.js';
import { refundAtProvider, type RefundOptions } from './provider-refund.js';
import { loadPayment, toPayment } from './queries.js';
import { eventData, eventOf, writePaymentUpdate } from './writes.js';
import type { Payment, PaymentRefund, RefundPaymentRequest, SettlePaymentRequest } from './schema.js';

/** Settling and refunding payments (DESIGN D16): each change of a payment commits with the D15 transition it drives, retried on a lost race. */

/**
 * Runs one change of a stored payment with the subscription change it drives, retrying a lost race
 * (the payment or the subscription changed meanwhile) by reading both again, at most
 * `MAX_ATTEMPTS` times. `plan` decides from the payment as read: the payment after the change,
 * the subscription trigger (or null), and the event data's extra fields. Returns the payment after.
 */
export async function changePayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  paymentId: string,
  plan: (
    payment: Payment,
    subscription: Subscription,
  ) => {
    next: Payment;
    decision: { trigger: SubscriptionTrigger; reason?: string | null } | null;
    extra?: { refund: PaymentRefund };
    providerRefundId?: string | null;
  },
): Promise<Payment> {
  return retryOnLostRace(
    async () => {
      const item = await loadPayment(runtime.store, principal, paymentId);
      const payment = toPayment(item);
      let next: Payment | undefined;
      let extra: { refund: PaymentRefund } | undefined;
      let providerRefundId: string | null = null;
      await changeSubscriptionWith(
        runtime,
        principal,
        payment.subscription_id,
        (subscription) => {
          const planned = plan(payment, subscription);
          next = planned.next;
          extra = planned.extra;
          providerRefundId = planned.providerRefundId ?? null;
          return planned.decision;
        },
        (tx, change) => {
          writePaymentUpdate(tx, principal.teamId, item, next!, providerRefundId);
          tx.emit({ type: eventOf(extra ? 'refunded' : next!.status), projectId: next!.project_id, data: { ...eventData(next!, change), ...extra } });
        },
      );
      return next!;
    },
    { exhausted: () => new ProblemError('CONFLICT', `Payment ${paymentId} or its subscription kept changing while this request ran; read it again and retry.`) },
  );
}

/**
 * Settles a pending payment (`POST /v1/payments/{id}`, DESIGN D16): pending → succeeded or failed, its
 * `payment.succeeded` / `payment.failed` event and the D15 transition the outcome drives
 * ({@link paymentTrigger}: e.g. a first payment succeeded → activated; a renewal failed → past_due), in
 * one transaction. Returns the payment. Errors: NOT_FOUND; CONFLICT (the payment is not pending —
 * naming its status — or it kept changing).
 */
export async function settlePayment(runtime: UnitOfWorkRuntime, principal: Principal, paymentId: string, input: SettlePaymentRequest): Promise<Payment> {
  return changePayment(runtime, principal, paymentId, (payment, subscription) => decideSettlement(payment, subscription, input.status, isoTime(runtime.clock.nowMs())));
}

/**
 * Refunds a succeeded payment in full or in part (`POST /v1/payments/{id}/refund`, `refund_payment`,
 * DESIGN D16): `amount` (minor units) defaults to what is left to refund; refunds accumulate in
 * `amount_refunded`, and the payment becomes `refunded` once all of it is refunded (a partial refund
 * keeps it `succeeded`). The refund is first made at the payment's provider, outside any transaction
 * (Stripe: the Refunds API on the PaymentIntent, `provider_payment_id`; manual: nothing to call, the
 * creator refunds outside the service), then recorded with exactly one `payment.refunded` (this refund's
 * amount and reason) and the provider's refund id (`provider_refund_id`, see {@link StoredPayment});
 * `cancel: true` also cancels the subscription at once (`subscription.canceled`, the reason kept as its
 * cancellation reason), in the same transaction. Returns the payment. Errors: NOT_FOUND;
 * VALIDATION_FAILED (an amount above what is left); CONFLICT (the payment is not succeeded — naming its
 * status —, the provider refused, `cancel` on a subscription that cannot be canceled, or a payment that
 * changed while the provider was called); PROVIDER_UNAVAILABLE (502: the provider could not be reached;
 * the payment is unchanged and the request can be retried).
 */
export async function refundPayment(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  paymentId: string,
  input: RefundPaymentRequest,
  options: RefundOptions = {},
): Promise<Payment> {
  const before = toPayment(await loadPayment(runtime.store, principal, paymentId));
  const amount = refundAmount(before, paymentId, input);
  const reason = input.reason ?? null;
  const providerRefundId = await refundAtProvider(runtime, principal.teamId, before, amount, reason, options);
  return changePayment(runtime, principal, paymentId, (payment) => {
    refundAmount(payment, paymentId, input);
    if (payment.amount_refunded !== before.amount_refunded) {
      throw new ProblemError('CONFLICT', `Payment ${paymentId} was refunded by another request while this refund was made at ${payment.provider}; read it again.`);
    }
    const refunded = payment.amount_refunded + amount;
    const next: Payment = { ...payment, amount_refunded: refunded, status: refunded === payment.amount ? 'refunded' : 'succeeded', updated_at: isoTime(runtime.clock.nowMs()) };
    return { next, decision: input.cancel ? { trigger: 'cancel', reason } : null, extra: { refund: { amount, reason } }, providerRefundId };
  });
}
