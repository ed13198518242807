import * as z from 'zod';
import { PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import { Currency, ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/**
 * The payment's shapes (DESIGN D12, D16): what reads return and the `payment.*` events carry
 * (`Payment`, imported by the webhook catalogue as `paymentObjectSchema`, so the payload shape is this
 * one definition) and the requests. Amounts are integers in the currency's MINOR unit (cents); times
 * are ISO 8601 UTC. A payment never holds card data, fee breakdowns or provider secrets.
 */

/**
 * The statuses of a payment (a closed list, written once): `pending` (initiated, awaiting confirmation —
 * a bank transfer, crypto), `succeeded`, `failed`, `refunded` (refunded in full; a partial refund keeps
 * `succeeded` with `amount_refunded` > 0).
 */
export const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed', 'refunded'] as const;
/** A payment status (see {@link PAYMENT_STATUSES}). */
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** The statuses a payment can be recorded in (`POST /v1/projects/{project_id}/payments`). */
export const RECORDABLE_PAYMENT_STATUSES = ['pending', 'succeeded', 'failed'] as const;
/** The statuses a pending payment can be settled to (`POST /v1/payments/{id}`). */
export const SETTLED_PAYMENT_STATUSES = ['succeeded', 'failed'] as const;

/**
 * Why a payment was made (a closed list, written once; Stripe Billing's `billing_reason` terms):
 * `subscription_create` (the first payment of a subscription: it drives pending / incomplete → active),
 * `renewal` (a period's payment: it drives the renewal, past_due and recovery transitions of D15),
 * `manual` (recorded outside the billing cycle: it never moves the subscription).
 */
export const BILLING_REASONS = ['subscription_create', 'renewal', 'manual'] as const;
/** A billing reason (see {@link BILLING_REASONS}). */
export type BillingReason = (typeof BILLING_REASONS)[number];

/** Largest amount of one payment, in the minor unit (the plans' ceiling is lower; a payment may cover several periods). */
export const MAX_PAYMENT_AMOUNT = 100_000_000_000;

const Amount = z.number().int().positive().max(MAX_PAYMENT_AMOUNT);

/** A subscriber's payment, as the API returns it and `payment.*` events carry it (DESIGN D16). */
export const Payment = z
  .object({
    id: Uuid,
    project_id: Uuid,
    subscriber_id: Uuid.describe('The subscriber who paid.'),
    subscription_id: Uuid.describe('The subscription the payment is for.'),
    amount: z.number().int().positive().describe('Amount paid, in the currency\u2019s minor unit (e.g. cents).'),
    amount_refunded: z.number().int().nonnegative().describe('Amount refunded so far, in the minor unit; equals amount once status is refunded.'),
    currency: Currency,
    status: z.enum(PAYMENT_STATUSES).describe('pending, succeeded, failed or refunded (in full; a partial refund stays succeeded).'),
    provider: z.enum(PAYMENT_PROVIDER_VALUES).describe('The provider the payment went through (see service://enums/payment-provider).'),
    provider_payment_id: z.string().nullable().describe('The provider\u2019s id of the payment (for manual: the creator\u2019s reference, e.g. a bank transfer reference), or null.'),
    billing_reason: z.enum(BILLING_REASONS).describe('subscription_create (first payment), renewal (a period\u2019s payment) or manual (outside the billing cycle).'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Payment' });
/** A payment (see {@link Payment}). */
export type Payment = z.infer<typeof Payment>;

/** A page of payments. */
export const PaymentList = listOf(Payment, 'PaymentList');

/** `{id}` path parameters of a payment. */
export const PaymentIdParams = z.object({ id: Uuid.describe('The payment id.') }).strict();

/** `{project_id}` path parameters of a project's payments. */
export const PaymentProjectParams = z.object({ project_id: Uuid.describe('The project the payments belong to.') }).strict();

/**
 * Body of `POST /v1/projects/{project_id}/payments` (the `manual` provider, DESIGN D16): a payment for an
 * existing subscription (`subscription_id`), or the first payment of a new subscription of `subscriber_id`
 * to the priced plan `plan_id`, created billed through the provider — `pending` for a pending payment,
 * `incomplete` for a failed one, `active` for a succeeded one (D15's "(new)" row). Exactly one of the two
 * forms.
 */
export const RecordPaymentRequest = z
  .object({
    subscription_id: Uuid.optional().describe('The subscription (of this project) the payment is for. Omit to create one with subscriber_id and plan_id.'),
    subscriber_id: Uuid.optional().describe('With plan_id instead of subscription_id: the subscriber (of this project) of a new subscription paid by this payment.'),
    plan_id: Uuid.optional().describe('With subscriber_id: the active, priced plan (of this project) of the new subscription.'),
    status: z.enum(RECORDABLE_PAYMENT_STATUSES).describe('pending (awaiting confirmation; settle it later with POST /v1/payments/{id}), succeeded or failed.'),
    amount: Amount.optional().describe(`Amount in the currency\u2019s minor unit, 1 to ${MAX_PAYMENT_AMOUNT}. Default: the plan\u2019s current price.`),
    currency: Currency.optional().describe('ISO 4217 code; must be the plan\u2019s currency. Default: the plan\u2019s currency.'),
    billing_reason: z
      .enum(BILLING_REASONS)
      .optional()
      .describe('subscription_create (only while the subscription awaits its first payment: pending or incomplete), renewal (any other status) or manual (never moves the subscription). Default: subscription_create for a subscription awaiting its first payment, else renewal.'),
    provider_payment_id: z.string().trim().min(1).max(255).optional().describe('Your reference for the payment (e.g. the bank transfer reference), up to 255 characters.'),
  })
  .strict()
  .meta({ id: 'RecordPaymentRequest' });
/** A validated payment record (see {@link RecordPaymentRequest}). */
export type RecordPaymentRequest = z.infer<typeof RecordPaymentRequest>;

/** Body of `POST /v1/payments/{id}`: settles a pending payment (DESIGN D16). */
export const SettlePaymentRequest = z
  .object({
    status: z.enum(SETTLED_PAYMENT_STATUSES).describe('The outcome of the pending payment: succeeded or failed.'),
  })
  .strict()
  .meta({ id: 'SettlePaymentRequest' });
/** A validated settlement (see {@link SettlePaymentRequest}). */
export type SettlePaymentRequest = z.infer<typeof SettlePaymentRequest>;

/** Body of `POST /v1/payments/{id}/refund` (and the `refund_payment` arguments besides `id`). */
export const RefundPaymentRequest = z
  .object({
    amount: Amount.optional().describe('Amount to refund in the minor unit, at most what is left to refund. Default: everything left to refund.'),
    reason: z.string().trim().min(1).max(500).optional().describe('Why, up to 500 characters; carried by the payment.refunded event (and kept as the cancellation reason with cancel).'),
    cancel: z.boolean().optional().describe('true also cancels the payment\u2019s subscription at once (subscription.canceled). Default false.'),
  })
  .strict()
  .meta({ id: 'RefundPaymentRequest' });
/** A validated refund (see {@link RefundPaymentRequest}). */
export type RefundPaymentRequest = z.infer<typeof RefundPaymentRequest>;

/** Query of `GET /v1/projects/{project_id}/payments` (and the `list_payments` tool's arguments besides `project_id`). */
export const ListPaymentsQuery = ListQuery.extend({
  subscriber_id: Uuid.optional().describe('Only payments of this subscriber.'),
  status: z.enum(PAYMENT_STATUSES).optional().describe('Only payments with this status.'),
  provider: z.enum(PAYMENT_PROVIDER_VALUES).optional().describe('Only payments through this provider.'),
  created_after: Timestamp.optional().describe('Only payments created at or after this time.'),
  created_before: Timestamp.optional().describe('Only payments created before this time.'),
}).strict();
/** A validated payment list query (see {@link ListPaymentsQuery}). */
export type ListPaymentsQuery = z.infer<typeof ListPaymentsQuery>;

/** A refund as the `payment.refunded` event carries it: this refund's amount (minor units) and reason. */
export const PaymentRefund = z
  .object({
    amount: z.number().int().positive().describe('Amount of this refund, in the minor unit.'),
    reason: z.string().nullable().describe('The reason given, or null.'),
  })
  .meta({ id: 'PaymentRefund' });
/** A refund (see {@link PaymentRefund}). */
export type PaymentRefund = z.infer<typeof PaymentRefund>;
