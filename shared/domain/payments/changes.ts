import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { IntegrationRuntime } from '../../integrations.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { changeSubscriptionWith } from '../subscriptions/transitions.js';
import type { Subscription } from '../subscriptions/schema.js';
import type { SubscriptionTrigger } from '../subscriptions/state-machine.js';
import { decideAcceptance, decideSettlement } from './decisions.js';
import { releaseRefundReservation } from '../../store/payments/writes.js';
import { holdsReservation, reserveRefund } from './refund-reservations.js';
import { refundAtProvider, type RefundOptions } from './provider-refund.js';
import { loadPayment, toPayment, type StoredPayment } from './queries.js';
import { eventData, eventOf, writePaymentUpdate } from './writes.js';
import type { Payment, PaymentRefund, RefundPaymentRequest, SettlePaymentRequest } from './schema.js';

/**
 * Settling and refunding payments (DESIGN D16): each change of a payment commits with the D15 transition it drives,
 * retried on a lost race.
 */

/**
 * Runs one change of a stored payment with the subscription change it drives, retrying a lost race
 * (the payment or the subscription changed meanwhile) by reading both again, at most
 * `MAX_ATTEMPTS` times (or `options.attempts`). `plan` decides from the payment as read: the payment after the change,
 * the subscription trigger (or null), and the event data's extra fields. Emits the `payment.*` event of a refund or
 * a new status (none when neither changed). Returns the payment after.
 */
export async function changePayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  paymentId: string,
  plan: (
    payment: Payment,
    subscription: Subscription,
    item: StoredPayment,
  ) => {
    next: Payment;
    decision: { trigger: SubscriptionTrigger; reason?: string | null } | null;
    extra?: { refund: PaymentRefund };
    providerRefundId?: string | null;
    /** The refund reservation this change settles (removed in the same update). */
    reservationKey?: string | null;
  },
  options: { attempts?: number } = {},
): Promise<Payment> {
  return retryOnLostRace(
    async () => {
      const item = await loadPayment(runtime.store, principal, paymentId);
      const payment = toPayment(item);
      let next: Payment | undefined;
      let extra: { refund: PaymentRefund } | undefined;
      let providerRefundId: string | null = null;
      let reservationKey: string | null = null;
      await changeSubscriptionWith(
        runtime,
        principal,
        payment.subscription_id,
        (subscription) => {
          const planned = plan(payment, subscription, item);
          next = planned.next;
          extra = planned.extra;
          providerRefundId = planned.providerRefundId ?? null;
          reservationKey = planned.reservationKey ?? null;
          return planned.decision;
        },
        (tx, change) => {
          writePaymentUpdate(tx, principal.teamId, item, next!, providerRefundId, reservationKey);
          // A change that neither refunds nor moves the status (an acceptance) happened to no payment: no payment
          // event.
          if (extra || next!.status !== payment.status)
            tx.emit({
              type: eventOf(extra ? 'refunded' : next!.status),
              projectId: next!.project_id,
              data: { ...eventData(next!, change), ...extra },
            });
        },
      );
      return next!;
    },
    {
      attempts: options.attempts,
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Payment ${paymentId} or its subscription kept changing while this request ran; read it again and retry.`,
        ),
    },
  );
}

/**
 * Settles a pending payment (`POST /v1/payments/{id}`, DESIGN D16): pending → succeeded or failed, its
 * `payment.succeeded` / `payment.failed` event and the D15 transition the outcome drives
 * ({@link paymentTrigger}: e.g. a first payment succeeded → activated; a renewal failed → past_due), in
 * one transaction. Returns the payment. Errors: NOT_FOUND; CONFLICT (the payment is not pending —
 * naming its status — or it kept changing).
 */
export async function settlePayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  paymentId: string,
  input: SettlePaymentRequest,
): Promise<Payment> {
  return changePayment(runtime, principal, paymentId, (payment, subscription) =>
    decideSettlement(payment, subscription, input.status, isoTime(runtime.clock.nowMs())),
  );
}

/**
 * Accepts a flagged payment (`POST /v1/payments/{id}/accept`, DESIGN D16): its `mismatch` cleared and the D15
 * transition it would have driven had it matched its plan's price ({@link decideAcceptance}: e.g. a first payment →
 * activated, a renewal → renewed), in one transaction; no `payment.*` event (the payment itself happened already).
 * Errors: NOT_FOUND; CONFLICT (not flagged, not succeeded, or it kept changing).
 */
export async function acceptPayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  paymentId: string,
): Promise<Payment> {
  return changePayment(runtime, principal, paymentId, (payment, subscription) =>
    decideAcceptance(payment, subscription, isoTime(runtime.clock.nowMs())),
  );
}

/**
 * Refunds a succeeded payment (DESIGN D16): `amount` (minor units; default all left) reserved ({@link reserveRefund}),
 * refunded at the provider (key from `idempotencyKey`), recorded with one `payment.refunded` (`cancel: true` also
 * cancels). Errors: NOT_FOUND; VALIDATION_FAILED; CONFLICT (not succeeded, in flight, refused); PROVIDER_UNAVAILABLE
 * (502: retry, same key).
 */
export async function refundPayment(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  paymentId: string,
  input: RefundPaymentRequest,
  options: RefundOptions & { idempotencyKey?: string | null } = {},
): Promise<Payment> {
  const reserved = await reserveRefund(runtime, principal, paymentId, input, options.idempotencyKey ?? null);
  const { amount, key } = reserved;
  const reason = input.reason ?? null;
  let providerRefundId: string | null;
  try {
    providerRefundId = await refundAtProvider(
      runtime,
      principal.teamId,
      reserved.payment,
      amount,
      reason,
      key,
      options,
    );
  } catch (error) {
    if (!(error instanceof ProblemError && error.code === 'PROVIDER_UNAVAILABLE'))
      await releaseRefundReservation(runtime.store, principal.teamId, paymentId, key);
    throw error;
  }
  return changePayment(
    runtime,
    principal,
    paymentId,
    (payment, _subscription, item) => {
      // Settled already by a request that took this one's Idempotency-Key over (its claim looked abandoned).
      if (!holdsReservation(item, key, runtime.clock.nowMs()))
        throw new ProblemError(
          'CONFLICT',
          `The refund of request ${key} on payment ${paymentId} is recorded already; read the payment.`,
        );
      if (payment.status !== 'succeeded' || payment.amount_refunded + amount > payment.amount) {
        throw new ProblemError(
          'CONFLICT',
          `Payment ${paymentId} is ${payment.status} with ${payment.amount_refunded} refunded: this refund of ${amount} no longer fits; read it again.`,
        );
      }
      const refunded = payment.amount_refunded + amount;
      const next: Payment = {
        ...payment,
        amount_refunded: refunded,
        status: refunded === payment.amount ? 'refunded' : 'succeeded',
        updated_at: isoTime(runtime.clock.nowMs()),
      };
      return {
        next,
        decision: input.cancel ? { trigger: 'cancel', reason } : null,
        extra: { refund: { amount, reason } },
        providerRefundId,
        reservationKey: key,
      };
    },
    { attempts: SETTLEMENT_ATTEMPTS },
  );
}

/**
 * Attempts of a refund's settlement: the provider has refunded already, so the record must follow even
 * when many refunds of one payment settle at once (each lost race is another settlement committing).
 */
const SETTLEMENT_ATTEMPTS = 30;
