import { defineModule, defineOperation } from '../../operations/definition.js';
import { ACCESS_EVENTS } from '../subscriptions/access-events.js';
import { paymentsInternalOperations } from './internal-operations.js';
import {
  ListPaymentsQuery,
  Payment,
  PaymentIdParams,
  PaymentList,
  PaymentProjectParams,
  RecordPaymentRequest,
  RefundPaymentRequest,
  SettlePaymentRequest,
} from './schema.js';

/** The subscription events a payment outcome can drive (DESIGN D15): activation, renewal, past due. */
const OUTCOME_EVENTS = [
  'subscription.activated',
  'subscription.renewed',
  'subscription.past_due',
  ...ACCESS_EVENTS,
] as const;

/**
 * The payment operations (DESIGN D13, D16), `manual` provider: listed and recorded under the project, one addressed by
 * id (`/v1/payments/{id}`: `POST` settles, `/accept` accepts a flagged one, `/refund` refunds). Recording, settling
 * and accepting use `project-subscription:update`
 * (no catalogue ability records payments; the outcome moves billing, D15); creating a subscription also needs
 * `:create`.
 */
export const paymentsModule = defineModule({
  folder: 'payments',
  operations: {
    listPayments: defineOperation({
      id: 'listPayments',
      summary:
        'List a project’s payments, newest first, optionally of one subscriber, status or provider, or created within a date range (no payment credentials, no fee breakdown).',
      tag: 'Payments',
      ability: 'project-payment:view-any',
      teamWide: false,
      params: PaymentProjectParams,
      query: ListPaymentsQuery,
      output: PaymentList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/payments', successStatus: 200 },
      tool: {
        name: 'list_payments',
        title: 'List payments',
        kind: 'read',
        description:
          'List a project\u2019s subscriber payments, newest first, optionally of one subscriber, status or provider, or created within a date range (no payment credentials, no fee breakdown).',
      },
    }),
    recordPayment: defineOperation({
      id: 'recordPayment',
      summary:
        'Record a payment of the manual provider (pending, succeeded or failed) for a subscription, or the first payment of a new subscription (subscriber_id and plan_id); its outcome drives the subscription (first payment → activated, renewal → renewed, failure → past_due, recovery → activated). Emits payment.pending|succeeded|failed.',
      tag: 'Payments',
      ability: 'project-subscription:update',
      teamWide: false,
      params: PaymentProjectParams,
      body: RecordPaymentRequest,
      output: Payment,
      events: ['payment.pending', 'payment.succeeded', 'payment.failed', 'subscription.created', ...OUTCOME_EVENTS],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/payments', successStatus: 201 },
    }),
    getPayment: defineOperation({
      id: 'getPayment',
      summary:
        'Read one payment: amount, refunds, status, provider and billing reason (no payment credentials, no fee breakdown).',
      tag: 'Payments',
      ability: 'project-payment:view',
      teamWide: false,
      params: PaymentIdParams,
      output: Payment,
      events: [],
      rest: { method: 'GET', path: '/v1/payments/{id}', successStatus: 200 },
      tool: {
        name: 'get_payment',
        title: 'Get payment',
        kind: 'read',
        description: 'Read one payment (no payment credentials, no fee breakdown).',
      },
    }),
    settlePayment: defineOperation({
      id: 'settlePayment',
      summary:
        'Settle a pending payment of the manual provider as succeeded or failed; the outcome drives the subscription like a recorded one. Emits payment.succeeded or payment.failed.',
      tag: 'Payments',
      ability: 'project-subscription:update',
      teamWide: false,
      params: PaymentIdParams,
      body: SettlePaymentRequest,
      output: Payment,
      events: ['payment.succeeded', 'payment.failed', ...OUTCOME_EVENTS],
      rest: { method: 'POST', path: '/v1/payments/{id}', successStatus: 200 },
    }),
    acceptPayment: defineOperation({
      id: 'acceptPayment',
      summary:
        'Accept a payment flagged because its currency or amount does not match its plan\u2019s price (mismatch): the flag is cleared and the payment drives the subscription as a matching one would have (first payment → activated, renewal → renewed, recovery → activated). No payment event: the payment happened already.',
      tag: 'Payments',
      ability: 'project-subscription:update',
      teamWide: false,
      params: PaymentIdParams,
      output: Payment,
      events: [...OUTCOME_EVENTS],
      rest: { method: 'POST', path: '/v1/payments/{id}/accept', successStatus: 200 },
    }),
    refundPayment: defineOperation({
      id: 'refundPayment',
      callsProvider: true,
      summary:
        'Refund a succeeded payment in full or in part through its provider (Stripe: the Refunds API; manual: recorded); the amount defaults to what is left; refunds accumulate; cancel: true also cancels the subscription at once. Emits payment.refunded (and subscription.canceled).',
      tag: 'Payments',
      ability: 'project-payment:refund',
      teamWide: false,
      params: PaymentIdParams,
      body: RefundPaymentRequest,
      output: Payment,
      events: ['payment.refunded', 'subscription.canceled', ...ACCESS_EVENTS],
      rest: { method: 'POST', path: '/v1/payments/{id}/refund', successStatus: 200 },
      tool: {
        name: 'refund_payment',
        title: 'Refund payment',
        kind: 'destructive',
        description:
          'Refund a succeeded payment in full or in part (default: everything left to refund); cancel: true also cancels its subscription at once.',
      },
    }),
  },
  internal: paymentsInternalOperations,
});
