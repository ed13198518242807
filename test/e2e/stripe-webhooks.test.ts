/**
 * Stripe in, signed webhooks out, end to end: against the local server (REST, the hooks
 * and the webhook pipeline in one process, DynamoDB Local), Stripe-signed `checkout.session.completed`,
 * then `invoice.paid`, then a renewal's `invoice.payment_failed` reach `POST /hooks/stripe/{project_id}`
 * over HTTP, and an HTTPS receiver registered through `POST /v1/webhook-endpoints` sees
 * `subscription.created`, `payment.succeeded`, `subscription.activated`, `payment.failed`,
 * `subscription.past_due` in that order (each Stripe event's webhooks before the next's; within one, the
 * service's emission order), each signed (checked with the receivers' own check,
 * `test/support/signature.ts`). No network beyond loopback.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalService } from '../../shared/local/service.js';
import { startTestReceiver, type TestReceiver } from '../support/https-receiver.js';
import { startTestService } from '../support/local-service.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { restCall } from '../support/rest-client.js';
import { checkSignature } from '../support/signature.js';
import {
  checkoutSession,
  connectStripe,
  invoice,
  stripeEventBody,
  stripeId,
  stripeSignature,
} from '../support/stripe.js';

const EVENTS = [
  'subscription.created',
  'payment.succeeded',
  'subscription.activated',
  'payment.failed',
  'subscription.past_due',
];

let service: LocalService;
let receiver: TestReceiver;
let stripeApi: FakeStripeApi;
let endpointSecret = '';
const received: Array<{ id: string; type: string; projectId: string | null; signatureProblem: string | null }> = [];

beforeAll(async () => {
  receiver = await startTestReceiver((headers, body) => {
    const envelope = JSON.parse(body) as { id: string; type: string; project_id: string | null };
    received.push({
      id: envelope.id,
      type: envelope.type,
      projectId: envelope.project_id,
      signatureProblem: checkSignature({ header: headers['svc-signature'], rawBody: body, secret: endpointSecret }),
    });
    return 200;
  });
  stripeApi = await startFakeStripeApi();
  service = await startTestService({
    extraCaPem: [receiver.caPem],
    allowPrivateTargets: true,
    integrations: { telegramApiRoot: 'http://127.0.0.1:9', stripeApiBaseUrl: stripeApi.url },
  });
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  await stripeApi?.stop();
});

/** REST with the demo token (every ability). */
const api = restCall(() => service);

describe('Stripe events reach the local hook and come out as signed webhooks', () => {
  it('checkout.session.completed, invoice.paid, invoice.payment_failed → subscription.created, payment.succeeded, subscription.activated, payment.failed, subscription.past_due', async () => {
    const project = await api('POST', '/v1/projects', { name: 'Stripe club', platform_type: 'telegram' });
    expect(project.status).toBe(201);
    const projectId = project.body.id as string;
    const plan = await api('POST', `/v1/projects/${projectId}/plans`, {
      name: 'Gold',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    expect(plan.status).toBe(201);
    const { webhookSecret } = await connectStripe(
      stripeApi,
      async (path, body) => expect((await api('PUT', path, body)).status).toBe(200),
      projectId,
    );
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      name: 'stripe flow',
      url: receiver.url,
      events: EVENTS,
    });
    expect(endpoint.status).toBe(201);
    endpointSecret = endpoint.body.secret;

    const subscription = stripeId('sub');
    const send = async (type: string, object: unknown) => {
      const created = Math.floor(Date.now() / 1000);
      const { body } = stripeEventBody(type, object, { created });
      const response = await fetch(`${service.baseUrl}/hooks/stripe/${projectId}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json; charset=utf-8',
          'Stripe-Signature': stripeSignature(body, webhookSecret, created),
        },
        body,
      });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await response.json()).toEqual({ received: true });
    };
    const mine = () => received.filter((item) => item.projectId === projectId);
    /** Waits until the receiver holds `count` of the project's events. */
    const delivered = (count: number) =>
      vi.waitFor(() => expect(mine()).toHaveLength(count), { timeout: 30_000, interval: 100 });
    // Each Stripe event's webhooks arrive before the next Stripe event is sent; the events one Stripe event
    // emits (one transaction) are delivered concurrently (D24), so their order is the service's emission
    // order: their event ids (ULIDs, monotonic within a transaction).
    await send(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), email: 'ada@example.com', planId: plan.body.id, subscription }),
    );
    await delivered(1);
    await send(
      'invoice.paid',
      invoice({ subscription, paymentIntent: stripeId('pi'), amount: 900, billingReason: 'subscription_create' }),
    );
    await delivered(3);
    await send(
      'invoice.payment_failed',
      invoice({ subscription, paymentIntent: stripeId('pi'), amount: 900, billingReason: 'subscription_cycle' }),
    );
    await delivered(5);

    const byStep = [mine().slice(0, 1), mine().slice(1, 3), mine().slice(3, 5)].flatMap((step) =>
      [...step].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    expect(byStep.map((item) => item.type)).toEqual(EVENTS);
    expect(mine().map((item) => item.signatureProblem)).toEqual(EVENTS.map(() => null));
  });
});
