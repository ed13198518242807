import type { Principal } from '../../auth/principal.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { readProviderPaymentRef } from '../../store/payments/reads.js';
import { putProviderPaymentRef } from '../../store/payments/writes.js';
import type { Transaction, UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { changeSubscriptionWith } from '../subscriptions/transitions.js';
import { changePayment } from './changes.js';
import { paymentDiscountOf, paymentTrigger, priceMismatch } from './decisions.js';
import { loadPayment, toPayment, type StoredPayment } from './queries.js';
import { reservedAmount } from './refund-reservations.js';
import { newPayment } from './recording.js';
import { eventData, eventOf, writeNewPayment, writePaymentUpdate } from './writes.js';
import type { Plan } from '../plans/schema.js';
import type { Subscription } from '../subscriptions/schema.js';
import type { SubscriptionTrigger } from '../subscriptions/state-machine.js';
import type { BillingReason, Payment, PaymentMismatch } from './schema.js';

/**
 * Payments a provider reports (DESIGN D16, D22): through its inbound events, found again by the provider's payment id.
 */

/** The payment a provider reports through an inbound event (Stripe: `invoice.paid`, `invoice.payment_failed`). */
export interface ProviderPaymentReport {
  /** Our subscription the payment is for (found through the provider's subscription id). */
  subscriptionId: string;
  projectId: string;
  provider: PaymentProvider;
  /** The provider's payment id (Stripe: the PaymentIntent, `pi_...`); one payment of ours per provider payment. */
  providerPaymentId: string;
  status: 'succeeded' | 'failed';
  /** In the currency's MINOR unit (positive). */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  billingReason: BillingReason;
  /**
   * Whether an amount below the plan's price flags the payment (Stripe: a first or a period's invoice; a proration
   * legitimately differs). Another currency always flags a succeeded payment ({@link priceMismatch}).
   */
  checkAmount: boolean;
  /** What the provider's coupons took off (minor units; 0: none), recorded with the subscription's discount. */
  discountAmount?: number;
  /** False: record the payment but move no subscription (an event older than one already applied, DESIGN D15). */
  drivesSubscription: boolean;
  /** The caller's writes in the same transaction (e.g. the provider subscription's last applied event). */
  alongside?: (tx: Transaction) => void;
}

/** What {@link recordProviderPayment} did: the payment as it is now, and whether this report changed anything. */
export interface ProviderPaymentOutcome {
  payment: Payment;
  changed: boolean;
}

/**
 * Records a payment the provider reports (DESIGN D16, D22): new → a payment of ours with its `keys.providerPayment`
 * item; known → only forward (pending/failed → succeeded with the amount paid, pending → failed). With
 * `drivesSubscription`, fires its D15 transition ({@link paymentTrigger}) in the same transaction, unless a succeeded
 * payment does not match its plan's price ({@link priceMismatch}): then it is recorded with its `mismatch` and waits
 * for the creator's acceptance. Errors: NOT_FOUND (gone); CONFLICT (kept changing).
 */
export async function recordProviderPayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  report: ProviderPaymentReport,
): Promise<ProviderPaymentOutcome> {
  const teamId = principal.teamId;
  const paymentId = newUuid();
  return retryOnLostRace(
    async () => {
      const ref = await readProviderPaymentRef(
        runtime.store,
        teamId,
        report.projectId,
        report.provider,
        report.providerPaymentId,
      );
      const nowIso = isoTime(runtime.clock.nowMs());
      if (ref) {
        const item = await loadPayment(runtime.store, principal, ref.payment_id);
        const current = toPayment(item);
        const moves = current.status === 'pending' || (current.status === 'failed' && report.status === 'succeeded');
        if (!moves) return { payment: current, changed: false };
        // A payment succeeding records what the provider says was paid (a retried invoice may differ from the attempt).
        const paid =
          report.status === 'succeeded' && report.amount > 0
            ? { amount: report.amount, currency: report.currency }
            : {};
        let next: Payment = { ...current, ...paid, status: report.status, updated_at: nowIso };
        await changeSubscriptionWith(
          runtime,
          principal,
          current.subscription_id,
          (subscription, plan) => {
            next = { ...next, mismatch: mismatchOf(report, next, subscription, plan) };
            return decisionOf(report, next, subscription);
          },
          (tx, change) => {
            writePaymentUpdate(tx, teamId, item, next);
            tx.emit({ type: eventOf(next.status), projectId: next.project_id, data: eventData(next, change) });
            report.alongside?.(tx);
          },
        );
        return { payment: next, changed: true };
      }
      let payment: Payment | undefined;
      await changeSubscriptionWith(
        runtime,
        principal,
        report.subscriptionId,
        (subscription, plan) => {
          payment = newPayment({
            id: paymentId,
            subscription,
            amount: report.amount,
            currency: report.currency,
            status: report.status,
            provider: report.provider,
            providerPaymentId: report.providerPaymentId,
            billingReason: report.billingReason,
            nowIso,
          });
          payment.mismatch = mismatchOf(report, payment, subscription, plan);
          payment.discount = paymentDiscountOf(subscription.discount, report.discountAmount ?? 0);
          return decisionOf(report, payment, subscription);
        },
        (tx, change) => {
          writeNewPayment(tx, teamId, payment!, change);
          putProviderPaymentRef(tx, teamId, payment!, report.provider, report.providerPaymentId);
          report.alongside?.(tx);
        },
      );
      return { payment: payment!, changed: true };
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Subscription ${report.subscriptionId} or its payment kept changing while the provider\u2019s event was applied; it will be sent again.`,
        ),
    },
  );
}

/** The mismatch of a reported payment with its plan's price: only a succeeded payment is checked. */
function mismatchOf(
  report: ProviderPaymentReport,
  payment: Payment,
  subscription: Subscription,
  plan: Plan,
): PaymentMismatch | null {
  return payment.status === 'succeeded' ? priceMismatch(payment, subscription, plan, report.checkAmount) : null;
}

/** The D15 change a reported payment drives: none for a stale event or a flagged payment (it waits for acceptance). */
function decisionOf(
  report: ProviderPaymentReport,
  payment: Payment,
  subscription: Subscription,
): { trigger: SubscriptionTrigger } | null {
  const trigger = report.drivesSubscription && payment.mismatch === null ? paymentTrigger(payment, subscription) : null;
  return trigger ? { trigger } : null;
}

/**
 * Records a provider-reported refund (DESIGN D16; Stripe `charge.refunded`): `totalRefunded` is CUMULATIVE (minor
 * units); only what exceeds `amount_refunded` is recorded, with ONE `payment.refunded`. Returns null when no payment
 * has that provider id. Errors: NOT_FOUND (payment gone); CONFLICT (kept changing).
 */
export async function recordProviderRefund(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  ref: { projectId: string; provider: PaymentProvider; providerPaymentId: string },
  totalRefunded: number,
  reason: string | null,
): Promise<ProviderPaymentOutcome | null> {
  const lookup = await readProviderPaymentRef(
    runtime.store,
    principal.teamId,
    ref.projectId,
    ref.provider,
    ref.providerPaymentId,
  );
  if (!lookup) return null;
  const paymentId = lookup.payment_id;
  // Refunds reserved by `refund_payment` calls in flight are in Stripe's total already: theirs to record.
  const known = (payment: Payment, item: StoredPayment) =>
    payment.amount_refunded + reservedAmount(item, runtime.clock.nowMs());
  const refundable = (payment: Payment, item: StoredPayment) =>
    payment.status === 'succeeded' && Math.min(totalRefunded, payment.amount) > known(payment, item);
  const currentItem = await loadPayment(runtime.store, principal, paymentId);
  const current = toPayment(currentItem);
  if (!refundable(current, currentItem)) return { payment: current, changed: false };
  let unchanged: Payment | undefined;
  const payment = await changePayment(runtime, principal, paymentId, (read, _subscription, item) => {
    if (!refundable(read, item)) {
      // Recorded meanwhile (the Refunds API call's own record): leave it as it is.
      unchanged = read;
      throw new ProblemError(
        'CONFLICT',
        `Payment ${paymentId} is ${read.status} with ${read.amount_refunded} refunded: nothing new to record.`,
      );
    }
    const added = Math.min(totalRefunded, read.amount) - known(read, item);
    const refunded = read.amount_refunded + added;
    const next: Payment = {
      ...read,
      amount_refunded: refunded,
      status: refunded === read.amount ? 'refunded' : 'succeeded',
      updated_at: isoTime(runtime.clock.nowMs()),
    };
    return { next, decision: null, extra: { refund: { amount: added, reason } } };
  }).catch((error: unknown) => {
    if (unchanged) return null;
    throw error;
  });
  return payment ? { payment, changed: true } : { payment: unchanged!, changed: false };
}
