/**
 * Stripe helpers of the tests: a project connected to Stripe through the connect operation
 * against the loopback fake Stripe API ({@link connectStripe}), Stripe event bodies of the shapes the hooks
 * read (API version 2026-10-28: `invoice.parent.subscription_details`, `invoice.payments`), and their
 * `Stripe-Signature` made with the SDK's own `webhooks.generateTestHeaderString`. No network.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { caller } from './calls.js';
import type { FakeStripeApi } from './stripe-api.js';

/** The Stripe API version the bodies claim. */
const STRIPE_API_VERSION = '2026-10-28';

/** A fresh webhook signing secret (`whsec_...`). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('hex')}`;
}

/**
 * Connects a project to Stripe the way a creator does: `PUT /v1/projects/{projectId}/payment-provider` with
 * a fresh restricted key (which `stripeApi`, the loopback fake the service's `stripeApiBaseUrl` points at, is
 * told to accept, so the connect check passes) and a fresh signing secret. `put` sends the request (REST,
 * as the test's own client does) and must throw unless it succeeds. Resolves with the secrets.
 */
export async function connectStripe(
  stripeApi: FakeStripeApi,
  put: (path: string, body: Record<string, unknown>) => Promise<unknown>,
  projectId: string,
): Promise<{ webhookSecret: string; secretKey: string }> {
  const webhookSecret = newWebhookSecret();
  const secretKey = `rk_test_${randomBytes(16).toString('hex')}`;
  stripeApi.addKey(secretKey);
  await put(`/v1/projects/${projectId}/payment-provider`, {
    provider: 'stripe',
    secret_key: secretKey,
    webhook_secret: webhookSecret,
  });
  return { webhookSecret, secretKey };
}

/**
 * {@link connectStripe} through a test file's `ok` ({@link caller}), then a monthly plan of 9.00 EUR created over REST
 * and synced to Stripe (it throws otherwise). Resolves with the plan's JSON and the webhook signing secret.
 */
export async function connectStripeWithPlan(
  stripeApi: FakeStripeApi,
  ok: ReturnType<typeof caller>['ok'],
  projectId: string,
): Promise<{ plan: Record<string, any>; webhookSecret: string }> {
  const { webhookSecret } = await connectStripe(stripeApi, (path, body) => ok('PUT', path, body), projectId);
  const plan = (await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Monthly', amount: 900, currency: 'EUR', interval: 'month' },
    201,
  )) as Record<string, any>;
  if (plan.sync_status !== 'synced') throw new Error(`the plan is not synced to Stripe: ${String(plan.sync_status)}`);
  return { plan, webhookSecret };
}

/** A Stripe-style id with `prefix` (`evt`, `cus`, `sub`, `pi`, `in`, `ch`, `cs`). */
export function stripeId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** The raw body of a Stripe event `type` carrying `object`, created at `created` (unix SECONDS). */
export function stripeEventBody(
  type: string,
  object: unknown,
  options: { created: number; id?: string },
): { id: string; body: string } {
  const id = options.id ?? stripeId('evt');
  const event = {
    id,
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created: options.created,
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  };
  return { id, body: JSON.stringify(event) };
}

/**
 * The `Stripe-Signature` header of `payload` signed with `secret` at `timestamp` (unix SECONDS), by the SDK's own test
 * helper (`Stripe.webhooks`).
 */
export function stripeSignature(payload: string, secret: string, timestamp: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

/** A completed Checkout Session (`checkout.session.completed`), subscription mode unless `mode: 'payment'`. */
export function checkoutSession(options: {
  customer: string | null;
  email?: string;
  name?: string;
  planId?: string;
  mode?: 'subscription' | 'payment';
  subscription?: string;
  paymentIntent?: string;
  amountTotal?: number;
  currency?: string;
  lineItemPriceId?: string;
  /** Default `paid`; `unpaid` for a delayed payment method (settled later by `checkout.session.async_payment_*`). */
  paymentStatus?: Stripe.Checkout.Session.PaymentStatus;
}): Partial<Stripe.Checkout.Session> {
  const mode = options.mode ?? 'subscription';
  return {
    id: stripeId('cs'),
    object: 'checkout.session',
    mode,
    status: 'complete',
    payment_status: options.paymentStatus ?? 'paid',
    customer: options.customer,
    customer_details: {
      email: options.email ?? null,
      name: options.name ?? null,
    } as Stripe.Checkout.Session.CustomerDetails,
    metadata: options.planId ? { plan_id: options.planId } : {},
    subscription: mode === 'subscription' ? (options.subscription ?? stripeId('sub')) : null,
    payment_intent: mode === 'payment' ? (options.paymentIntent ?? stripeId('pi')) : null,
    amount_total: options.amountTotal ?? 900,
    currency: options.currency ?? 'eur',
    ...(options.lineItemPriceId
      ? {
          line_items: {
            object: 'list',
            data: [{ id: stripeId('li'), object: 'item', price: { id: options.lineItemPriceId } }],
            has_more: false,
            url: '',
          } as unknown as Stripe.ApiList<Stripe.LineItem>,
        }
      : {}),
  };
}

/** An invoice of Stripe subscription `subscription` paid (or failed) through PaymentIntent `paymentIntent`. */
export function invoice(options: {
  subscription: string;
  paymentIntent: string;
  amount: number;
  currency?: string;
  billingReason: Stripe.Invoice.BillingReason;
  metadata?: Record<string, string>;
}): Partial<Stripe.Invoice> {
  return {
    id: stripeId('in'),
    object: 'invoice',
    amount_due: options.amount,
    amount_paid: options.amount,
    currency: options.currency ?? 'eur',
    billing_reason: options.billingReason,
    metadata: options.metadata ?? {},
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { subscription: options.subscription, metadata: {} },
    },
    payments: {
      object: 'list',
      data: [
        {
          id: stripeId('inpay'),
          object: 'invoice_payment',
          payment: { type: 'payment_intent', payment_intent: options.paymentIntent },
        },
      ],
      has_more: false,
      url: '',
    } as unknown as Stripe.ApiList<Stripe.InvoicePayment>,
  };
}

/** A Stripe subscription `id` as `customer.subscription.*` events carry it. */
export function stripeSubscription(options: {
  id: string;
  status?: Stripe.Subscription.Status;
  cancelAtPeriodEnd?: boolean;
  paused?: boolean;
  priceId?: string;
  metadata?: Record<string, string>;
}): Partial<Stripe.Subscription> {
  return {
    id: options.id,
    object: 'subscription',
    status: options.status ?? 'active',
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    cancellation_details: {
      comment: null,
      feedback: null,
      reason: options.status === 'canceled' ? 'cancellation_requested' : null,
    } as Stripe.Subscription.CancellationDetails,
    pause_collection: options.paused ? { behavior: 'void', resumes_at: null } : null,
    metadata: options.metadata ?? {},
    items: {
      object: 'list',
      data: [{ id: stripeId('si'), object: 'subscription_item', price: { id: options.priceId ?? stripeId('price') } }],
      has_more: false,
      url: '',
    } as unknown as Stripe.ApiList<Stripe.SubscriptionItem>,
  };
}

/** A charge of PaymentIntent `paymentIntent` with `amountRefunded` (cumulative, minor units) refunded. */
export function refundedCharge(options: {
  paymentIntent: string;
  amount: number;
  amountRefunded: number;
  reason?: Stripe.Refund.Reason;
}): Partial<Stripe.Charge> {
  return {
    id: stripeId('ch'),
    object: 'charge',
    amount: options.amount,
    amount_refunded: options.amountRefunded,
    refunded: options.amountRefunded >= options.amount,
    payment_intent: options.paymentIntent,
    refunds: {
      object: 'list',
      data: [
        {
          id: stripeId('re'),
          object: 'refund',
          amount: options.amountRefunded,
          reason: options.reason ?? 'requested_by_customer',
        },
      ],
      has_more: false,
      url: '',
    } as unknown as Stripe.ApiList<Stripe.Refund>,
  };
}
