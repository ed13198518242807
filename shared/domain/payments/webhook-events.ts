import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { Subscriber } from '../subscribers/schema.js';
import { Subscription } from '../subscriptions/schema.js';
import { Payment, PaymentRefund } from './schema.js';

/**
 * Every payment event (DESIGN D16): the payment, its subscription (after any transition the payment drove) and its
 * subscriber (D10).
 */
const paymentData = z.object({
  payment: Payment,
  subscription: Subscription.check(
    z.describe('The payment\u2019s subscription, after any transition the payment drove.'),
  ),
  subscriber: Subscriber,
});
/** A refund: the payment data plus this refund's amount and reason. */
const paymentRefundData = z.extend(paymentData, {
  refund: PaymentRefund.check(
    z.describe('This refund (the payment\u2019s amount_refunded holds every refund so far).'),
  ),
});

/** Payments' webhook events (`payment.*`, DESIGN D16). */
export const paymentsEvents = [
  defineEvent('payment.succeeded', 'project-payment:view', true, paymentData, 'A subscriber\u2019s payment succeeded.'),
  defineEvent('payment.failed', 'project-payment:view', true, paymentData, 'A subscriber\u2019s payment failed.'),
  defineEvent(
    'payment.pending',
    'project-payment:view',
    true,
    paymentData,
    'A subscriber\u2019s payment was initiated and awaits confirmation.',
  ),
  defineEvent(
    'payment.refunded',
    'project-payment:view',
    true,
    paymentRefundData,
    'A payment was refunded in full or in part.',
  ),
] as const;
