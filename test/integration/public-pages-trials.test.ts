/**
 * One trial per e-mail on the join page (DESIGN D26, D33), without a browser: a trial plan's "Join" form asks for the
 * e-mail and sends it to Stripe Checkout (the loopback fake) with the trial; once that trial started, joining again
 * with the same address (any case) answers 409 with a clear message and a "Continue without a trial" button, which
 * leads to a Checkout Session of the plan without its trial for that address. Against DynamoDB Local.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { caller } from '../support/calls.js';
import { serveStripeHook } from '../support/fixtures/stripe-hooks.js';
import {
  clock,
  openJoinPage,
  projectId,
  runtime,
  serve,
  team,
  usePublicPagesFixture,
} from '../support/fixtures/public-pages.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { connectStripe } from '../support/stripe.js';

usePublicPagesFixture();

let stripe: FakeStripeApi;
beforeAll(async () => {
  stripe = await startFakeStripeApi({ nowMs: () => clock.nowMs() });
});
afterAll(async () => {
  await stripe.stop();
});

const { ok } = caller(() => ({ runtime, token: team.token }));

/**
 * Connects the project to the fake Stripe (events delivered to its hook in-process) and creates a card-less trial plan.
 */
async function trialPlan(): Promise<{ id: string; name: string }> {
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    retry: { retries: 0, minTimeoutMs: 0 },
  };
  const { webhookSecret } = await connectStripe(stripe, (path, body) => ok('PUT', path, body), projectId);
  const [hookRuntime, hookProject] = [runtime, projectId];
  stripe.deliverEventsTo(
    async (body, signature) => (await serveStripeHook(hookRuntime, hookProject, body, signature)).status,
    webhookSecret,
  );
  const body = { name: 'Monthly', amount: 900, currency: 'EUR', interval: 'month', trial_days: 14 };
  const plan = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { ...body, trial_payment_method_required: false },
    201,
  );
  expect(plan.sync_status).toBe('synced');
  return plan;
}

/** The Checkout Session the fake created for a 303 to its hosted page. */
const sessionOf = (location: string) => stripe.checkoutSessions.get(location.split('/checkout/')[1])!;

/** The hidden fields of the form whose button says `button`, in `body`. */
function formBefore(body: string, button: string): Record<string, string> {
  const form = body.slice(0, body.indexOf(button)).split('<form').at(-1)!;
  return Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1], match[2]]),
  );
}

describe('trials on the join page', () => {
  it('asks for the e-mail, refuses its second trial with a clear message and continues to the plan without one', async () => {
    const plan = await trialPlan();
    const { page, cookies, csrf } = await openJoinPage();
    expect(page.body).toContain('14-day free trial');
    expect(page.body).toMatch(new RegExp(`<input type="email" id="email-${plan.id}" name="email" required`));

    const join = (email: string) =>
      serve('POST', `/join/${projectId}/plans/${plan.id}`, {
        cookies,
        form: { csrf_token: csrf, idempotency_key: randomUUID(), email },
      });
    const first = await join('fan@example.com');
    expect(first.statusCode).toBe(303);
    const trialSession = sessionOf(first.headers.Location);
    expect(trialSession).toMatchObject({
      customer_email: 'fan@example.com',
      payment_method_collection: 'if_required',
      subscription_data: { trial_period_days: '14' },
    });
    await stripe.payCheckout(trialSession.id, { card: false });
    expect(stripe.deliveredEvents.at(-2)).toEqual({ type: 'checkout.session.completed', status: 200 });

    const second = await join('FAN@example.com');
    expect(second.statusCode).toBe(409);
    expect(second.body).toContain('You have already had your free trial');
    expect(second.body).toContain(
      'FAN@example.com already had a free trial with Book &lt;club>; there is one per person.',
    );
    const button = 'Continue to Monthly without a trial';
    expect(second.body).toContain(button);
    const fields = formBefore(second.body, button);
    expect(fields).toMatchObject({ email: 'FAN@example.com', trial: 'false', csrf_token: csrf });

    const sessions = stripe.checkoutSessions.size;
    const continued = await serve('POST', `/join/${projectId}/plans/${plan.id}`, { cookies, form: fields });
    expect(continued.statusCode).toBe(303);
    expect(stripe.checkoutSessions.size).toBe(sessions + 1);
    const plain = sessionOf(continued.headers.Location);
    expect(plain).toMatchObject({ customer_email: 'FAN@example.com', metadata: { trial_days: '0' } });
    expect(plain.subscription_data.trial_period_days).toBeUndefined();
    expect(plain.payment_method_collection).toBeUndefined();
  });
});
