/**
 * The payment-failed message of a Stripe-billed subscription (DESIGN D32) against DynamoDB Local and the loopback
 * Stripe fake: its recovery link is the hosted URL of the subscription's open invoice, which opens Stripe's page; with
 * no open invoice it falls back to the portal.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { OutgoingMail } from '../../shared/mail/port.js';
import { stripeId } from '../support/stripe.js';
import {
  checkout,
  clock,
  fakeStripeApi,
  paidInvoice,
  projectId,
  runtime,
  stripeEvent,
  useStripeHooksFixture,
} from '../support/fixtures/stripe-hooks.js';
import { DAY_MS } from '../../shared/clock.js';

useStripeHooksFixture();

let sent: OutgoingMail[];

beforeEach(() => {
  sent = [];
  runtime.mail = {
    async send(mail) {
      sent.push(mail);
      return { messageId: `<${sent.length}@test>` };
    },
  };
});

/** Fans out the outbox, then sends every queued message once. */
async function deliver(): Promise<void> {
  await relayOutbox(runtime, clock.nowMs());
  for (const { message } of runtime.messageSends.splice(0)) await processJobMessage(runtime, message);
}

/** A Stripe-billed subscription whose renewal just failed (past_due). */
async function failedRenewal(): Promise<string> {
  const { subscription } = await checkout();
  await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_create')).send();
  await deliver();
  clock.advance(31 * DAY_MS);
  return subscription;
}

describe('payment failed, billed through Stripe', () => {
  it('links the open invoice Stripe hosts, and that link opens it', async () => {
    const subscription = await failedRenewal();
    const hosted = fakeStripeApi().openInvoice(subscription);
    await stripeEvent('invoice.payment_failed', paidInvoice(subscription, stripeId('pi'), 'subscription_cycle')).send();
    await deliver();
    const notice = sent.at(-1)!;
    expect(notice.to).toBe('ada@example.com');
    expect(notice.headers?.['List-Unsubscribe']).toBeUndefined();
    expect(notice.text).toContain(hosted);
    const page = await fetch(hosted);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Pay invoice');
  });

  it('falls back to the portal when Stripe has no open invoice', async () => {
    const subscription = await failedRenewal();
    await stripeEvent('invoice.payment_failed', paidInvoice(subscription, stripeId('pi'), 'subscription_cycle')).send();
    await deliver();
    expect(sent.at(-1)!.text).toContain(`/portal/${projectId}`);
  });
});
