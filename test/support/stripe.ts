/**
 * Stripe helpers of the tests (issue 10 §1): a project connected to Stripe the way the connect operation
 * stores it (until the outbound branch's `PUT /v1/projects/{id}/payment-provider` with `provider: "stripe"`
 * lands, {@link connectStripeDirectly} writes the same state), Stripe event bodies of the shapes the hooks
 * read (API version 2026-10-28: `invoice.parent.subscription_details`, `invoice.payments`), and their
 * `Stripe-Signature` made with the SDK's own `webhooks.generateTestHeaderString`. No network.
 */
import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { isoTime } from '../../shared/clock.js';
import { putCredential, sealCredential } from '../../shared/credentials/repository.js';
import { integrationsOf } from '../../shared/integrations.js';
import { stripeWebhooks } from '../../shared/providers/stripe-client.js';
import type { Runtime } from '../../shared/runtime.js';
import { keys } from '../../shared/store/keys.js';
import { unitOfWork } from '../../shared/store/unit-of-work.js';

/** The Stripe API version the bodies claim. */
export const STRIPE_API_VERSION = '2026-10-28';

/** A fresh webhook signing secret (`whsec_...`). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

/**
 * Connects project `projectId` of team `teamId` to Stripe as the connect operation does: the `stripe`
 * credential (`secret_key`, `webhook_secret`) sealed with the runtime's key-encryption key, and the
 * project's `payment_provider` set to stripe, in one transaction. Emits no event. Resolves with the secrets.
 */
export async function connectStripeDirectly(runtime: Runtime, teamId: string, projectId: string, secrets: { webhookSecret?: string; secretKey?: string } = {}): Promise<{ webhookSecret: string; secretKey: string }> {
  const webhookSecret = secrets.webhookSecret ?? newWebhookSecret();
  const secretKey = secrets.secretKey ?? `rk_test_${randomBytes(16).toString('hex')}`;
  const nowIso = isoTime(runtime.clock.nowMs());
  const item = await sealCredential(integrationsOf(runtime).keyEncryptionKey, { teamId, projectId, kind: 'stripe' }, { secret_key: secretKey, webhook_secret: webhookSecret }, {}, nowIso);
  await unitOfWork(runtime, teamId, (tx) => {
    putCredential(tx, item);
    tx.update(keys.project(teamId, projectId), {
      expression: 'SET payment_provider = :provider',
      condition: 'attribute_exists(pk)',
      values: { ':provider': { provider: 'stripe', connected_at: nowIso } },
    });
  });
  return { webhookSecret, secretKey };
}

/** A Stripe-style id with `prefix` (`evt`, `cus`, `sub`, `pi`, `in`, `ch`, `cs`). */
export function stripeId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** The raw body of a Stripe event `type` carrying `object`, created at `created` (unix SECONDS). */
export function stripeEventBody(type: string, object: unknown, options: { created: number; id?: string }): { id: string; body: string } {
  const id = options.id ?? stripeId('evt');
  const event = { id, object: 'event', api_version: STRIPE_API_VERSION, created: options.created, type, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, data: { object } };
  return { id, body: JSON.stringify(event) };
}

/** The `Stripe-Signature` header of `payload` signed with `secret` at `timestamp` (unix SECONDS), by the SDK. */
export function stripeSignature(payload: string, secret: string, timestamp: number): string {
  return stripeWebhooks.generateTestHeaderString({ payload, secret, timestamp });
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
}): Partial<Stripe.Checkout.Session> {
  const mode = options.mode ?? 'subscription';
  return {
    id: stripeId('cs'),
    object: 'checkout.session',
    mode,
    status: 'complete',
    payment_status: 'paid',
    customer: options.customer,
    customer_details: { email: options.email ?? null, name: options.name ?? null } as Stripe.Checkout.Session.CustomerDetails,
    metadata: options.planId ? { plan_id: options.planId } : {},
    subscription: mode === 'subscription' ? (options.subscription ?? stripeId('sub')) : null,
    payment_intent: mode === 'payment' ? (options.paymentIntent ?? stripeId('pi')) : null,
    amount_total: options.amountTotal ?? 900,
    currency: options.currency ?? 'eur',
    ...(options.lineItemPriceId ? { line_items: { object: 'list', data: [{ id: stripeId('li'), object: 'item', price: { id: options.lineItemPriceId } }], has_more: false, url: '' } as unknown as Stripe.ApiList<Stripe.LineItem> } : {}),
  };
}

/** An invoice of Stripe subscription `subscription` paid (or failed) through PaymentIntent `paymentIntent`. */
export function invoice(options: { subscription: string; paymentIntent: string; amount: number; currency?: string; billingReason: Stripe.Invoice.BillingReason; metadata?: Record<string, string> }): Partial<Stripe.Invoice> {
  return {
    id: stripeId('in'),
    object: 'invoice',
    amount_due: options.amount,
    amount_paid: options.amount,
    currency: options.currency ?? 'eur',
    billing_reason: options.billingReason,
    metadata: options.metadata ?? {},
    parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: options.subscription, metadata: {} } },
    payments: { object: 'list', data: [{ id: stripeId('inpay'), object: 'invoice_payment', payment: { type: 'payment_intent', payment_intent: options.paymentIntent } }], has_more: false, url: '' } as unknown as Stripe.ApiList<Stripe.InvoicePayment>,
  };
}

/** A Stripe subscription `id` as `customer.subscription.*` events carry it. */
export function stripeSubscription(options: { id: string; status?: Stripe.Subscription.Status; cancelAtPeriodEnd?: boolean; paused?: boolean; priceId?: string; metadata?: Record<string, string> }): Partial<Stripe.Subscription> {
  return {
    id: options.id,
    object: 'subscription',
    status: options.status ?? 'active',
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    cancellation_details: { comment: null, feedback: null, reason: options.status === 'canceled' ? 'cancellation_requested' : null } as Stripe.Subscription.CancellationDetails,
    pause_collection: options.paused ? { behavior: 'void', resumes_at: null } : null,
    metadata: options.metadata ?? {},
    items: { object: 'list', data: [{ id: stripeId('si'), object: 'subscription_item', price: { id: options.priceId ?? stripeId('price') } }], has_more: false, url: '' } as unknown as Stripe.ApiList<Stripe.SubscriptionItem>,
  };
}

/** A charge of PaymentIntent `paymentIntent` with `amountRefunded` (cumulative, minor units) refunded. */
export function refundedCharge(options: { paymentIntent: string; amount: number; amountRefunded: number; reason?: Stripe.Refund.Reason }): Partial<Stripe.Charge> {
  return {
    id: stripeId('ch'),
    object: 'charge',
    amount: options.amount,
    amount_refunded: options.amountRefunded,
    refunded: options.amountRefunded >= options.amount,
    payment_intent: options.paymentIntent,
    refunds: { object: 'list', data: [{ id: stripeId('re'), object: 'refund', amount: options.amountRefunded, reason: options.reason ?? 'requested_by_customer' }], has_more: false, url: '' } as unknown as Stripe.ApiList<Stripe.Refund>,
  };
}
