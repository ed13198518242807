import { createPlan } from '../../shared/domain/plans/creation.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A plan in team B's project and one in team A's other project (outside the scoped token's reach). */
interface Seeded {
  bPlan: { id: string; name: string };
  aOtherPlan: { id: string };
}

const newPlan = { name: 'Plan of A', amount: 500, currency: 'USD', interval: 'month' };

export default defineIsolationCases<Seeded>({
  seed: async (runtime, w) => ({
    bPlan: await createPlan(runtime, w.b.principal, w.b.project.id, {
      name: 'B secret gold plan',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    }),
    aOtherPlan: await createPlan(runtime, w.a.principal, w.a.otherProject.id, {
      name: 'Other plan of A',
      amount: 100,
      currency: 'USD',
      interval: 'year',
    }),
  }),
  secretsOfB: (extra) => [extra.bPlan.id, extra.bPlan.name],
  operations: {
    listPlans: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    createPlan: { foreign: { input: (w) => ({ project_id: w.b.project.id, ...newPlan }), expect: NOT_FOUND } },
    getPlan: {
      foreign: { input: (_w, extra) => ({ id: extra.bPlan.id }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOtherPlan.id }), expect: NOT_FOUND },
    },
    updatePlan: {
      foreign: { input: (_w, extra) => ({ id: extra.bPlan.id, name: 'Hijacked', amount: 1 }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOtherPlan.id, name: 'Hijacked' }), expect: NOT_FOUND },
    },
    deletePlan: {
      foreign: { input: (_w, extra) => ({ id: extra.bPlan.id }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOtherPlan.id }), expect: NOT_FOUND },
    },
    activatePlan: {
      foreign: { input: (_w, extra) => ({ id: extra.bPlan.id }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOtherPlan.id }), expect: NOT_FOUND },
    },
    deactivatePlan: {
      foreign: { input: (_w, extra) => ({ id: extra.bPlan.id }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOtherPlan.id }), expect: NOT_FOUND },
    },
    syncPlan: {
      foreign: { input: (_w, extra) => ({ id: extra.bPlan.id }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOtherPlan.id }), expect: NOT_FOUND },
    },
  },
});
