import { recordPayment } from '../../shared/domain/payments/recording.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';
import { seedPayments, type Seeded } from './payments.js';

/**
 * Portal links (DESIGN D27): team A's token against team B's subscriber (and the scoped token against A's other
 * project's) is NOT_FOUND. The seed also serves the subscriber-principal walk of tenant-isolation.test.ts: in a
 * project of A, the portal's subscriber (`own`) and another subscriber (`sibling`); a second project of A
 * (`otherProject`) and a project of B (`otherTeam`), each with a subscriber, a subscription and payments.
 */
export default defineIsolationCases<{
  own: Seeded;
  sibling: Omit<Seeded, 'pendingPaymentId'>;
  otherProject: Seeded;
  otherTeam: Seeded;
  projectId: string;
  otherTeamProjectId: string;
}>({
  seed: async (runtime, w) => {
    const project = await createProject(runtime, w.a.principal, {
      name: 'Portal project of A',
      platform_type: 'telegram',
    });
    const own = await seedPayments(runtime, w.a.principal, project.id, 'Portal plan of A');
    const subscriber = await createSubscriber(runtime, w.a.principal, project.id, {
      display_name: 'Sibling subscriber',
      consent: false,
    });
    const subscription = await createSubscription(runtime, w.a.principal, project.id, {
      subscriber_id: subscriber.id,
      plan_id: own.planId,
    });
    const payment = await recordPayment(runtime, w.a.principal, project.id, {
      subscription_id: subscription.id,
      status: 'succeeded',
      billing_reason: 'manual',
    });
    const otherProject = await createProject(runtime, w.a.principal, {
      name: 'Second portal project of A',
      platform_type: 'telegram',
    });
    const otherTeamProject = await createProject(runtime, w.b.principal, {
      name: 'B secret portal project',
      platform_type: 'telegram',
    });
    return {
      projectId: project.id,
      own,
      sibling: {
        planId: own.planId,
        subscriberId: subscriber.id,
        subscriptionId: subscription.id,
        paymentId: payment.id,
      },
      otherProject: await seedPayments(runtime, w.a.principal, otherProject.id, 'Second portal plan of A'),
      otherTeam: await seedPayments(runtime, w.b.principal, otherTeamProject.id, 'B secret portal plan'),
      otherTeamProjectId: otherTeamProject.id,
    };
  },
  secretsOfB: (extra) => [...Object.values(extra.otherTeam), extra.otherTeamProjectId],
  operations: {
    createPortalSession: {
      foreign: { input: (_w, extra) => ({ id: extra.otherTeam.subscriberId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.otherProject.subscriberId }), expect: NOT_FOUND },
    },
  },
});
