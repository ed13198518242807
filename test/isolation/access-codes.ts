import { generateAccessCodes } from '../../shared/domain/access-codes/generation.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import type { Principal } from '../../shared/auth/principal.js';
import type { Runtime } from '../../shared/runtime.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A plan and a one-code batch in a project: their ids and the code (shown once, at generation). */
interface Seeded {
  planId: string;
  batchId: string;
  codeId: string;
  code: string;
}

async function seedCodes(runtime: Runtime, principal: Principal, projectId: string): Promise<Seeded> {
  const plan = await createPlan(runtime, principal, projectId, {
    name: 'Isolation plan',
    amount: 500,
    currency: 'USD',
    interval: 'month',
  });
  const generated = await generateAccessCodes(runtime, principal, {
    project_id: projectId,
    plan_id: plan.id,
    count: 1,
    effect: 'free_access',
    access_days: null,
    max_redemptions: 1,
    expires_at: null,
  });
  return { planId: plan.id, batchId: generated.batch.id, codeId: generated.codes[0].id, code: generated.codes[0].code };
}

export default defineIsolationCases<{ b: Seeded; aOther: Seeded }>({
  seed: async (runtime, w) => ({
    b: await seedCodes(runtime, w.b.principal, w.b.project.id),
    aOther: await seedCodes(runtime, w.a.principal, w.a.otherProject.id),
  }),
  secretsOfB: (extra) => [extra.b.planId, extra.b.batchId, extra.b.codeId, extra.b.code],
  operations: {
    listAccessCodes: {
      foreign: { input: (w, extra) => ({ project_id: w.b.project.id, batch_id: extra.b.batchId }), expect: NOT_FOUND },
    },
    generateAccessCodes: {
      foreign: {
        input: (w, extra) => ({ project_id: w.b.project.id, plan_id: extra.b.planId, count: 1 }),
        expect: NOT_FOUND,
      },
    },
    getAccessCode: {
      foreign: { input: (_w, extra) => ({ id: extra.b.codeId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.codeId }), expect: NOT_FOUND },
    },
    revokeAccessCode: {
      foreign: { input: (_w, extra) => ({ id: extra.b.codeId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.codeId }), expect: NOT_FOUND },
    },
    // Team B's code in team B's project (the project is foreign), and team A's other project's code
    // redeemed through the scoped token: NOT_FOUND before any read of the code.
    redeemAccessCode: {
      foreign: {
        input: (w, extra) => ({
          project_id: w.b.project.id,
          code: extra.b.code,
          subscriber: { display_name: 'Intruder' },
        }),
        expect: NOT_FOUND,
      },
      scoped: {
        input: (w, extra) => ({
          project_id: w.a.otherProject.id,
          code: extra.aOther.code,
          subscriber: { display_name: 'Intruder' },
        }),
        expect: NOT_FOUND,
      },
    },
  },
});
