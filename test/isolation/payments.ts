import type { Principal } from '../../shared/auth/principal.js';
import { recordPayment } from '../../shared/domain/payments/recording.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { connectPaymentProvider } from '../../shared/domain/projects/payment-provider.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import type { Runtime } from '../../shared/runtime.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A manual provider, a plan, a subscriber, a subscription, a succeeded payment and a pending one, in a project. */
export interface Seeded {
  planId: string;
  subscriberId: string;
  subscriptionId: string;
  paymentId: string;
  pendingPaymentId: string;
}

export async function seedPayments(
  runtime: Runtime,
  principal: Principal,
  projectId: string,
  name: string,
): Promise<Seeded> {
  await connectPaymentProvider(runtime, principal, projectId, { provider: 'manual' });
  const plan = await createPlan(runtime, principal, projectId, {
    name,
    amount: 700,
    currency: 'USD',
    interval: 'month',
  });
  const subscriber = await createSubscriber(runtime, principal, projectId, {
    display_name: `${name} payer`,
    consent: false,
  });
  const subscription = await createSubscription(runtime, principal, projectId, {
    subscriber_id: subscriber.id,
    plan_id: plan.id,
  });
  const payment = await recordPayment(runtime, principal, projectId, {
    subscription_id: subscription.id,
    status: 'succeeded',
    billing_reason: 'manual',
  });
  const pending = await recordPayment(runtime, principal, projectId, {
    subscription_id: subscription.id,
    status: 'pending',
    billing_reason: 'manual',
  });
  return {
    planId: plan.id,
    subscriberId: subscriber.id,
    subscriptionId: subscription.id,
    paymentId: payment.id,
    pendingPaymentId: pending.id,
  };
}

/**
 * Team A's full token against team B's payments (and the scoped token against A's other project): NOT_FOUND, lists
 * without them.
 */
export default defineIsolationCases<{ b: Seeded; aOther: Seeded; a: Seeded }>({
  seed: async (runtime, w) => ({
    b: await seedPayments(runtime, w.b.principal, w.b.project.id, 'B secret paid plan'),
    aOther: await seedPayments(runtime, w.a.principal, w.a.otherProject.id, 'Other paid plan of A'),
    a: await seedPayments(runtime, w.a.principal, w.a.project.id, 'Paid plan of A'),
  }),
  secretsOfB: (extra) => Object.values(extra.b),
  operations: {
    listPayments: {
      foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND },
    },
    recordPayment: {
      // A's own project (manual provider connected) and B's subscription: NOT_FOUND, nothing recorded.
      foreign: {
        input: (w, extra) => ({
          project_id: w.a.project.id,
          subscription_id: extra.b.subscriptionId,
          status: 'succeeded',
        }),
        expect: NOT_FOUND,
      },
    },
    getPayment: {
      foreign: { input: (_w, extra) => ({ id: extra.b.paymentId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.paymentId }), expect: NOT_FOUND },
    },
    settlePayment: {
      foreign: { input: (_w, extra) => ({ id: extra.b.pendingPaymentId, status: 'succeeded' }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.pendingPaymentId, status: 'succeeded' }), expect: NOT_FOUND },
    },
    acceptPayment: {
      foreign: { input: (_w, extra) => ({ id: extra.b.paymentId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.paymentId }), expect: NOT_FOUND },
    },
    refundPayment: {
      foreign: { input: (_w, extra) => ({ id: extra.b.paymentId, amount: 1 }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.paymentId, amount: 1 }), expect: NOT_FOUND },
    },
  },
});
