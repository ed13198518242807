import { PromotionCodeText } from '../coupons/discount.js';
import * as z from '../../schemas/zod.js';
import { PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import { Currency, listOf, ListQuery, LongText, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * The payment's shapes (DESIGN D12, D16): what reads return and the `payment.*` events carry
 * (`Payment`, imported by the payments module's webhook events, so the payload shape is this
 * one definition) and the requests. Amounts are integers in the currency's MINOR unit (cents); times
 * are ISO 8601 UTC. A payment never holds card data, fee breakdowns or provider secrets.
 */

/**
 * The statuses of a payment (a closed list, written once): `pending` (initiated, awaiting confirmation —
 * a bank transfer, crypto), `succeeded`, `failed`, `refunded` (refunded in full; a partial refund keeps
 * `succeeded` with `amount_refunded` > 0).
 */
const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed', 'refunded'] as const;
/** A payment status (see {@link PAYMENT_STATUSES}). */
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** The statuses a payment can be recorded in (`POST /v1/projects/{project_id}/payments`). */
const RECORDABLE_PAYMENT_STATUSES = ['pending', 'succeeded', 'failed'] as const;
/** The statuses a pending payment can be settled to (`POST /v1/payments/{id}`). */
const SETTLED_PAYMENT_STATUSES = ['succeeded', 'failed'] as const;

/**
 * Why a payment was made (a closed list, written once; Stripe Billing's `billing_reason` terms):
 * `subscription_create` (the first payment of a subscription: it drives pending / incomplete → active),
 * `renewal` (a period's payment: it drives the renewal, past_due and recovery transitions of D15),
 * `manual` (recorded outside the billing cycle: it never moves the subscription).
 */
const BILLING_REASONS = ['subscription_create', 'renewal', 'manual'] as const;
/** A billing reason (see {@link BILLING_REASONS}). */
export type BillingReason = (typeof BILLING_REASONS)[number];

/**
 * Largest amount of one payment, in the minor unit (the plans' ceiling is lower; a payment may cover several periods).
 */
const MAX_PAYMENT_AMOUNT = 100_000_000_000;

const Amount = z.number().check(z.int(), z.positive(), z.lte(MAX_PAYMENT_AMOUNT));

/**
 * Why a provider-reported payment does not match its plan's price (a closed list, written once): `currency` (paid in
 * another currency than the price), `amount_below_price` (a first or period invoice paid less than the price).
 */
const PAYMENT_MISMATCH_REASONS = ['currency', 'amount_below_price'] as const;

/**
 * How a provider-reported payment differs from its plan's price (DESIGN D16): the payment is recorded as the provider
 * says, but it moves no subscription until the creator accepts it (`POST /v1/payments/{id}/accept`).
 */
export const PaymentMismatch = z
  .object({
    expected_amount: z
      .number()
      .check(z.int(), z.nonnegative(), z.describe('The least amount the plan’s price asks, in the minor unit.')),
    expected_currency: Currency.check(z.describe('The currency of the plan’s price.')),
    reason: z
      .enum(PAYMENT_MISMATCH_REASONS)
      .check(z.describe('currency: paid in another currency; amount_below_price: paid less than the price.')),
  })
  .register(z.globalRegistry, { id: 'PaymentMismatch' });
/** A payment's mismatch with its plan's price (see {@link PaymentMismatch}). */
export type PaymentMismatch = z.infer<typeof PaymentMismatch>;

/** What a coupon took off one payment (DESIGN D33): the coupon, the code redeemed, the amount in the minor unit. */
export const PaymentDiscount = z
  .object({
    coupon_id: Uuid,
    promotion_code: z.nullable(z.string()),
    amount: z.number().check(z.int(), z.nonnegative(), z.describe('Taken off this payment, in the minor unit.')),
  })
  .register(z.globalRegistry, { id: 'PaymentDiscount' });
/** A payment's discount (see {@link PaymentDiscount}). */
export type PaymentDiscount = z.infer<typeof PaymentDiscount>;

/** A subscriber's payment, as the API returns it and `payment.*` events carry it (DESIGN D16). */
export const Payment = z
  .object({
    id: Uuid,
    project_id: Uuid,
    subscriber_id: Uuid,
    subscription_id: Uuid,
    amount: z.number().check(z.int(), z.positive(), z.describe('In the minor unit (e.g. cents).')),
    amount_refunded: z.number().check(z.int(), z.nonnegative(), z.describe('Refunded so far, in the minor unit.')),
    currency: Currency,
    status: z.enum(PAYMENT_STATUSES).check(z.describe('refunded = in full; a partial refund stays succeeded.')),
    provider: z.enum(PAYMENT_PROVIDER_VALUES),
    provider_payment_id: z
      .nullable(z.string())
      .check(z.describe('The provider\u2019s id (manual: your reference), or null.')),
    billing_reason: z.enum(BILLING_REASONS),
    mismatch: z
      .nullable(PaymentMismatch)
      .check(
        z.describe(
          'Set when a provider reported a payment whose currency or amount does not match the plan\u2019s price: it moves no subscription until accepted (POST /v1/payments/{id}/accept). null: it matches, or was accepted.',
        ),
      ),
    discount: z
      .nullable(PaymentDiscount)
      .check(z.describe('What a coupon took off this payment; null: paid at full price.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Payment' });
/** A payment (see {@link Payment}). */
export type Payment = z.infer<typeof Payment>;

/** A page of payments. */
export const PaymentList = listOf(Payment, 'PaymentList');

/** `{id}` path parameters of a payment. */
export const PaymentIdParams = z.strictObject({ id: Uuid.check(z.describe('The payment id.')) });

/** `{project_id}` path parameters of a project's payments. */
export const PaymentProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project the payments belong to.')),
});

/**
 * Body of `POST /v1/projects/{project_id}/payments` (the `manual` provider, DESIGN D16): a payment for an
 * existing subscription (`subscription_id`), or the first payment of a new subscription of `subscriber_id`
 * to the priced plan `plan_id`, created billed through the provider — `pending` for a pending payment,
 * `incomplete` for a failed one, `active` for a succeeded one (D15's "(new)" row). Exactly one of the two
 * forms.
 */
export const RecordPaymentRequest = z
  .strictObject({
    subscription_id: z
      .optional(Uuid)
      .check(z.describe('The subscription paid for; or omit it and give subscriber_id and plan_id to create one.')),
    subscriber_id: z.optional(Uuid).check(z.describe('With plan_id: the subscriber of a new subscription.')),
    plan_id: z.optional(Uuid).check(z.describe('With subscriber_id: the priced plan of a new subscription.')),
    status: z.enum(RECORDABLE_PAYMENT_STATUSES).check(z.describe('pending is settled later (POST /v1/payments/{id}).')),
    amount: z.optional(Amount).check(z.describe('In the minor unit. Default: the plan\u2019s price.')),
    currency: z.optional(Currency).check(z.describe('The plan\u2019s currency (the default).')),
    billing_reason: z
      .optional(z.enum(BILLING_REASONS))
      .check(
        z.describe(
          'Default: subscription_create while the subscription is pending or incomplete, else renewal; manual never moves it.',
        ),
      ),
    provider_payment_id: z
      .optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(255)))
      .check(z.describe('Your reference (e.g. of the bank transfer).')),
    promotion_code: z
      .optional(PromotionCodeText)
      .check(
        z.describe(
          'With subscriber_id and plan_id: a promotion code of the project the new subscription starts with (its limits are counted atomically; the amount defaults to the discounted price, and later payments too while the discount lasts).',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'RecordPaymentRequest' });
/** A validated payment record (see {@link RecordPaymentRequest}). */
export type RecordPaymentRequest = z.infer<typeof RecordPaymentRequest>;

/** Body of `POST /v1/payments/{id}`: settles a pending payment (DESIGN D16). */
export const SettlePaymentRequest = z
  .strictObject({
    status: z.enum(SETTLED_PAYMENT_STATUSES).check(z.describe('The outcome of the pending payment.')),
  })
  .register(z.globalRegistry, { id: 'SettlePaymentRequest' });
/** A validated settlement (see {@link SettlePaymentRequest}). */
export type SettlePaymentRequest = z.infer<typeof SettlePaymentRequest>;

/** Body of `POST /v1/payments/{id}/refund` (and the `refund_payment` arguments besides `id`). */
export const RefundPaymentRequest = z
  .strictObject({
    amount: z.optional(Amount).check(z.describe('In the minor unit. Default: all that is left to refund.')),
    reason: z.optional(LongText(500, 1)).check(z.describe('Carried by payment.refunded (and the cancellation).')),
    cancel: z.optional(z.boolean()).check(z.describe('true also cancels the subscription at once.')),
  })
  .register(z.globalRegistry, { id: 'RefundPaymentRequest' });
/** A validated refund (see {@link RefundPaymentRequest}). */
export type RefundPaymentRequest = z.infer<typeof RefundPaymentRequest>;

/**
 * Query of `GET /v1/projects/{project_id}/payments` (and the `list_payments` tool's arguments besides `project_id`).
 */
export const ListPaymentsQuery = z.extend(ListQuery, {
  subscriber_id: z.optional(Uuid).check(z.describe('Only this subscriber\u2019s.')),
  status: z.optional(z.enum(PAYMENT_STATUSES)).check(z.describe('Only this status.')),
  provider: z.optional(z.enum(PAYMENT_PROVIDER_VALUES)).check(z.describe('Only this provider.')),
  created_after: z.optional(Timestamp).check(z.describe('Created at or after.')),
  created_before: z.optional(Timestamp).check(z.describe('Created before.')),
});
/** A validated payment list query (see {@link ListPaymentsQuery}). */
export type ListPaymentsQuery = z.infer<typeof ListPaymentsQuery>;

/** A refund as the `payment.refunded` event carries it: this refund's amount (minor units) and reason. */
export const PaymentRefund = z
  .object({
    amount: z.number().check(z.int(), z.positive(), z.describe('In the minor unit.')),
    reason: z.nullable(z.string()),
  })
  .register(z.globalRegistry, { id: 'PaymentRefund' });
/** A refund (see {@link PaymentRefund}). */
export type PaymentRefund = z.infer<typeof PaymentRefund>;
