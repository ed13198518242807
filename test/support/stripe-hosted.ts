/**
 * The buyer-facing and event-sending half of the loopback Stripe fake (test/support/stripe-api.ts): the hosted
 * checkout page and its "Pay", the signed events Stripe sends when a buyer pays, and the end of a trial. Paying a
 * session with `subscription_data.trial_period_days` starts a `trialing` subscription whose first invoice is for zero;
 * a session with `payment_method_collection: if_required` may be paid without a card (form field `card=none`). At the
 * trial's end ({@link HostedStripe.endTrial}) a subscription with a card renews (`customer.subscription.updated` to
 * `active`, then `invoice.paid` of the period), one without a card and `trial_settings.end_behavior.
 * missing_payment_method: cancel` is canceled (`customer.subscription.deleted`), as Stripe does. A failed renewal
 * ({@link HostedStripe.failRenewal}) leaves an open invoice Stripe hosts and sends `invoice.payment_failed`; paying it
 * ({@link HostedStripe.payOpenInvoice}) sends `invoice.paid`.
 */
import type { ServerResponse } from 'node:http';
import { checkoutSession, invoice, stripeEventBody, stripeSignature } from './stripe.js';
import type { FakeStripeDiscounts } from './stripe-discounts.js';
import { firstLineItemCharge } from './stripe-line-items.js';

/** Where events go: the service's Stripe hook URL, or a function given the body and its `Stripe-Signature`. */
type StripeEventTarget = string | ((body: string, signature: string) => Promise<number>);

/** What the hosted half shares with the API half of the fake. */
export interface HostedStripeState {
  prices: Map<string, Record<string, any>>;
  subscriptions: Map<string, Record<string, any>>;
  checkoutSessions: Map<string, Record<string, any>>;
  addSubscription: (
    id: string,
    options: { priceId: string; customer?: string; status?: string },
  ) => Record<string, any>;
  nextId: (prefix: string) => string;
  /** Now, in Unix seconds. */
  created: () => number;
  /** What a session's discount takes off, and a code the buyer typed (the fake's coupons and promotion codes). */
  redeem: FakeStripeDiscounts['redeem'];
  applyTypedCode: FakeStripeDiscounts['applyTypedCode'];
  /** Opens an invoice of a subscription that Stripe hosts: its id and hosted URL. */
  openInvoice: (subscription: string) => { id: string; hostedUrl: string };
  /** The open invoice `id` was paid: no longer listed as open. */
  closeInvoice: (id: string) => void;
}

/** The hosted half of the fake (see the module comment). */
export interface HostedStripe {
  /** Serves the hosted checkout (`GET /checkout/<id>`, `POST /checkout/<id>/pay`); false for any other path. */
  serve: (method: string, path: string, text: string, response: ServerResponse) => boolean;
  /** Pays session `sessionId` as its buyer (`card: false` only where no card is required); returns the success URL. */
  pay: (sessionId: string, options?: { email?: string; card?: boolean }) => Promise<string>;
  /** Ends the trial of Stripe subscription `id` now, delivering the events Stripe would. */
  endTrial: (id: string) => Promise<void>;
  /**
   * The renewal of Stripe subscription `id` fails now: `past_due`, an open invoice, `invoice.payment_failed`. Returns
   * the invoice's hosted URL.
   */
  failRenewal: (id: string) => Promise<string>;
  /** The open invoice of Stripe subscription `id` is paid now: `active`, `invoice.paid` of the period. */
  payOpenInvoice: (id: string) => Promise<void>;
  deliverEventsTo: (target: StripeEventTarget, webhookSecret: string) => void;
  deliveredEvents: { type: string; status: number }[];
}

/** The hosted half of a fake over `state`. */
export function hostedStripe(state: HostedStripeState): HostedStripe {
  const { prices, subscriptions, checkoutSessions, nextId, created } = state;
  let delivery: { target: StripeEventTarget; webhookSecret: string } | null = null;
  const deliveredEvents: { type: string; status: number }[] = [];

  /** Signs and sends one event to the delivery target, recording the hook's answer. */
  const deliver = async (type: string, object: unknown) => {
    if (!delivery) throw new Error('The fake Stripe API has no delivery URL: call deliverEventsTo first.');
    const now = created();
    const { body } = stripeEventBody(type, object, { created: now });
    const signature = stripeSignature(body, delivery.webhookSecret, now);
    const target = delivery.target;
    const status =
      typeof target === 'string'
        ? (
            await fetch(target, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature },
              body,
            })
          ).status
        : await target(body, signature);
    deliveredEvents.push({ type, status });
  };

  /**
   * A buyer paid `session` with `email`: the events Stripe sends, the subscription it creates, where the buyer goes.
   */
  const pay = async (session: Record<string, any>, email: string, card: boolean): Promise<string> => {
    const customer = nextId('cus');
    const { priceId, amount: fullPrice, currency } = firstLineItemCharge(session, prices);
    const { amountOff, discounts } = state.redeem(session, fullPrice);
    const amount = fullPrice - amountOff;
    const mode = session.mode === 'payment' ? 'payment' : 'subscription';
    const trialDays = Number(session.subscription_data?.trial_period_days ?? 0);
    const withCard = card || session.payment_method_collection !== 'if_required';
    const subscription =
      mode === 'subscription'
        ? state.addSubscription(nextId('sub'), { priceId, customer, status: trialDays > 0 ? 'trialing' : 'active' })
        : undefined;
    if (subscription)
      Object.assign(subscription, {
        metadata: { ...(session.subscription_data?.metadata ?? {}) },
        default_payment_method: withCard ? nextId('pm') : null,
        trial_end: trialDays > 0 ? created() + trialDays * 86_400 : null,
        trial_settings: session.subscription_data?.trial_settings ?? null,
      });
    const paymentIntent = nextId('pi');
    const firstAmount = trialDays > 0 ? 0 : amount;
    const completed = {
      ...checkoutSession({
        customer,
        email,
        mode,
        subscription: subscription?.id,
        paymentIntent,
        amountTotal: firstAmount,
        currency,
      }),
      id: session.id,
      metadata: session.metadata ?? {},
      customer_email: session.customer_email ?? null,
      client_reference_id: session.client_reference_id ?? null,
      discounts,
      total_details: { amount_discount: trialDays > 0 ? 0 : amountOff, amount_shipping: 0, amount_tax: 0 },
    };
    Object.assign(session, { status: 'complete', customer, subscription: subscription?.id ?? null });
    await deliver('checkout.session.completed', completed);
    if (subscription)
      await deliver('invoice.paid', {
        ...invoice({
          subscription: subscription.id,
          paymentIntent,
          amount: firstAmount,
          currency,
          billingReason: 'subscription_create',
        }),
        total_discount_amounts: firstAmount > 0 && amountOff > 0 ? [{ amount: amountOff, discount: nextId('di') }] : [],
      });
    return String(session.success_url ?? '/').replace('{CHECKOUT_SESSION_ID}', session.id);
  };

  /** The hosted checkout page of a session: what it sells and a "Pay" form (and "without a card" where allowed). */
  const checkoutPage = (session: Record<string, any>) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Fake Stripe Checkout</title></head><body><main>` +
    `<h1>Fake Stripe Checkout</h1><p>Session ${session.id}</p><form method="post" action="/checkout/${session.id}/pay">` +
    `<label for="email">Email</label> <input id="email" name="email" type="email" value="${String(session.customer_email ?? '').replace(/[<>"&]/g, '')}" required> ` +
    (session.allow_promotion_codes === 'true'
      ? `<label for="promotion_code">Promotion code</label> <input id="promotion_code" name="promotion_code"> `
      : '') +
    `<button type="submit">Pay</button>` +
    (session.payment_method_collection === 'if_required'
      ? ` <button type="submit" name="card" value="none">Start trial without a card</button>`
      : '') +
    `</form></main></body></html>`;

  return {
    serve(method, path, text, response) {
      const match = /^\/checkout\/([^/]+)(\/pay)?$/.exec(path);
      if (!match) return false;
      const session = checkoutSessions.get(match[1]);
      if (!session) {
        response.writeHead(404, { 'Content-Type': 'text/plain' }).end('No such checkout session');
        return true;
      }
      if (method === 'GET' && !match[2]) {
        response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(checkoutPage(session));
        return true;
      }
      if (method !== 'POST' || !match[2]) return false;
      const form = new URLSearchParams(text);
      if (form.get('promotion_code')) state.applyTypedCode(session, form.get('promotion_code')!);
      pay(session, form.get('email') ?? String(session.customer_email ?? ''), form.get('card') !== 'none').then(
        (location) => response.writeHead(303, { Location: location }).end(),
        (error: Error) => response.writeHead(500, { 'Content-Type': 'text/plain' }).end(error.message),
      );
      return true;
    },
    pay(sessionId, options = {}) {
      const session = checkoutSessions.get(sessionId);
      if (!session) throw new Error(`No such checkout session: ${sessionId}`);
      return pay(session, options.email ?? String(session.customer_email ?? ''), options.card ?? true);
    },
    async endTrial(id) {
      const subscription = subscriptions.get(id);
      if (subscription?.status !== 'trialing') throw new Error(`Stripe subscription ${id} is not trialing`);
      const price = subscription.items.data[0].price;
      Object.assign(subscription, { trial_end: created() });
      if (!subscription.default_payment_method) {
        const behavior = subscription.trial_settings?.end_behavior?.missing_payment_method ?? 'create_invoice';
        if (behavior !== 'cancel') throw new Error(`the fake ends card-less trials only with cancel, not ${behavior}`);
        Object.assign(subscription, { status: 'canceled', canceled_at: created(), ended_at: created() });
        Object.assign(subscription, { cancellation_details: { reason: null, comment: null, feedback: null } });
        await deliver('customer.subscription.deleted', structuredClone(subscription));
        return;
      }
      subscription.status = 'active';
      await deliver('customer.subscription.updated', structuredClone(subscription));
      await deliver(
        'invoice.paid',
        invoice({
          subscription: id,
          paymentIntent: nextId('pi'),
          amount: Number(price.unit_amount ?? 0),
          currency: String(price.currency ?? 'eur'),
          billingReason: 'subscription_cycle',
        }),
      );
    },
    async failRenewal(id) {
      const subscription = subscriptions.get(id);
      if (subscription?.status !== 'active') throw new Error(`Stripe subscription ${id} is not active`);
      const price = subscription.items.data[0].price;
      const open = state.openInvoice(id);
      subscription.status = 'past_due';
      subscription.latest_invoice = open.id;
      await deliver('invoice.payment_failed', {
        ...invoice({
          subscription: id,
          paymentIntent: nextId('pi'),
          amount: Number(price.unit_amount ?? 0),
          currency: String(price.currency ?? 'eur'),
          billingReason: 'subscription_cycle',
        }),
        id: open.id,
        status: 'open',
        amount_paid: 0,
        hosted_invoice_url: open.hostedUrl,
      });
      return open.hostedUrl;
    },
    async payOpenInvoice(id) {
      const subscription = subscriptions.get(id);
      if (subscription?.status !== 'past_due') throw new Error(`Stripe subscription ${id} is not past_due`);
      const price = subscription.items.data[0].price;
      state.closeInvoice(String(subscription.latest_invoice));
      subscription.status = 'active';
      await deliver('invoice.paid', {
        ...invoice({
          subscription: id,
          paymentIntent: nextId('pi'),
          amount: Number(price.unit_amount ?? 0),
          currency: String(price.currency ?? 'eur'),
          billingReason: 'subscription_cycle',
        }),
        id: String(subscription.latest_invoice),
        status: 'paid',
      });
    },
    deliverEventsTo: (target, webhookSecret) => void (delivery = { target, webhookSecret }),
    deliveredEvents,
  };
}
