import type { Principal } from '../../shared/auth/principal.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import type { Runtime } from '../../shared/runtime.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A plan, a subscriber and an active subscription in a project. */
interface Seeded {
  planId: string;
  subscriberId: string;
  subscriptionId: string;
}

async function seedSubscription(
  runtime: Runtime,
  principal: Principal,
  projectId: string,
  name: string,
): Promise<Seeded> {
  const plan = await createPlan(runtime, principal, projectId, {
    name,
    amount: 700,
    currency: 'USD',
    interval: 'month',
  });
  const subscriber = await createSubscriber(runtime, principal, projectId, {
    display_name: `${name} subscriber`,
    consent: false,
  });
  const subscription = await createSubscription(runtime, principal, projectId, {
    subscriber_id: subscriber.id,
    plan_id: plan.id,
  });
  return { planId: plan.id, subscriberId: subscriber.id, subscriptionId: subscription.id };
}

/**
 * Team A's full token against team B's subscriptions (and the scoped token against A's other project): NOT_FOUND, lists
 * without them.
 */
export default defineIsolationCases<{ b: Seeded; aOther: Seeded; a: Seeded }>({
  seed: async (runtime, w) => ({
    b: await seedSubscription(runtime, w.b.principal, w.b.project.id, 'B secret subscription plan'),
    aOther: await seedSubscription(runtime, w.a.principal, w.a.otherProject.id, 'Other plan of A'),
    a: await seedSubscription(runtime, w.a.principal, w.a.project.id, 'Plan of A'),
  }),
  secretsOfB: (extra) => [extra.b.planId, extra.b.subscriberId, extra.b.subscriptionId],
  operations: {
    listSubscriptions: {
      foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND },
    },
    createSubscription: {
      foreign: {
        input: (w, extra) => ({
          project_id: w.b.project.id,
          subscriber_id: extra.b.subscriberId,
          plan_id: extra.b.planId,
        }),
        expect: NOT_FOUND,
      },
    },
    checkProjectAccess: {
      foreign: {
        input: (w, extra) => ({ project_id: w.b.project.id, subscriber_id: extra.b.subscriberId }),
        expect: NOT_FOUND,
      },
      scoped: {
        input: (w, extra) => ({ project_id: w.a.otherProject.id, subscriber_id: extra.aOther.subscriberId }),
        expect: NOT_FOUND,
      },
    },
    getSubscription: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriptionId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriptionId }), expect: NOT_FOUND },
    },
    cancelSubscription: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriptionId, at_period_end: false }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriptionId, at_period_end: false }), expect: NOT_FOUND },
    },
    pauseSubscription: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriptionId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriptionId }), expect: NOT_FOUND },
    },
    resumeSubscription: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriptionId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriptionId }), expect: NOT_FOUND },
    },
    suspendSubscription: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriptionId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriptionId }), expect: NOT_FOUND },
    },
    unsuspendSubscription: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriptionId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriptionId }), expect: NOT_FOUND },
    },
    changeSubscriptionPlan: {
      // A's own subscription moved to B's plan, and B's subscription moved to A's plan: both NOT_FOUND.
      foreign: { input: (_w, extra) => ({ id: extra.a.subscriptionId, plan_id: extra.b.planId }), expect: NOT_FOUND },
      scoped: {
        input: (_w, extra) => ({ id: extra.aOther.subscriptionId, plan_id: extra.aOther.planId }),
        expect: NOT_FOUND,
      },
    },
  },
});
