import { createPlan } from '../../shared/domain/plans/creation.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/**
 * Team A's token against team B's plan (and the scoped token against a plan of A's other project): NOT_FOUND before any
 * provider call.
 */
export default defineIsolationCases<{ bPlanId: string; aOtherPlanId: string }>({
  seed: async (runtime, w) => ({
    bPlanId: (
      await createPlan(runtime, w.b.principal, w.b.project.id, {
        name: 'B secret checkout plan',
        amount: 500,
        currency: 'EUR',
        interval: 'month',
      })
    ).id,
    aOtherPlanId: (
      await createPlan(runtime, w.a.principal, w.a.otherProject.id, {
        name: 'Other checkout plan of A',
        amount: 500,
        currency: 'EUR',
        interval: 'month',
      })
    ).id,
  }),
  secretsOfB: (extra) => [extra.bPlanId],
  operations: {
    createCheckoutSession: {
      foreign: { input: (_w, extra) => ({ id: extra.bPlanId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOtherPlanId }), expect: NOT_FOUND },
    },
  },
});
