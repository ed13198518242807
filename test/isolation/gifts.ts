import { randomUUID } from 'node:crypto';
import type { Principal } from '../../shared/auth/principal.js';
import { isoTime } from '../../shared/clock.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import type { Runtime } from '../../shared/runtime.js';
import { giftStore } from '../../shared/store/gifts.js';
import { unitOfWork } from '../../shared/store/unit-of-work.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A plan and a paid gift of it in a project: their ids. */
interface Seeded {
  planId: string;
  giftId: string;
}

async function seedGift(runtime: Runtime, principal: Principal, projectId: string): Promise<Seeded> {
  const plan = await createPlan(runtime, principal, projectId, {
    name: 'Isolation plan',
    amount: 500,
    currency: 'USD',
    interval: 'month',
  });
  const now = isoTime(runtime.clock.nowMs());
  const giftId = randomUUID();
  await unitOfWork(runtime, principal.teamId, (tx) =>
    giftStore.create(tx, principal.teamId, {
      id: giftId,
      project_id: projectId,
      plan_id: plan.id,
      buyer_email: 'buyer@example.com',
      recipient_email: 'friend@example.com',
      message: null,
      deliver_at: now,
      amount: 500,
      currency: 'USD',
      status: 'paid',
      provider_checkout_session_id: 'cs_test_isolation',
      access_code_id: null,
      created_at: now,
      paid_at: now,
      delivered_at: null,
      updated_at: now,
    }),
  );
  return { planId: plan.id, giftId };
}

export default defineIsolationCases<{ b: Seeded; aOther: Seeded }>({
  seed: async (runtime, w) => ({
    b: await seedGift(runtime, w.b.principal, w.b.project.id),
    aOther: await seedGift(runtime, w.a.principal, w.a.otherProject.id),
  }),
  secretsOfB: (extra) => [extra.b.planId, extra.b.giftId],
  operations: {
    createGiftCheckoutSession: {
      foreign: {
        input: (_w, extra) => ({
          id: extra.b.planId,
          buyer_email: 'buyer@example.com',
          recipient_email: 'friend@example.com',
        }),
        expect: NOT_FOUND,
      },
      scoped: {
        input: (_w, extra) => ({
          id: extra.aOther.planId,
          buyer_email: 'buyer@example.com',
          recipient_email: 'friend@example.com',
        }),
        expect: NOT_FOUND,
      },
    },
    listGifts: {
      foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND },
      scoped: { input: (w) => ({ project_id: w.a.otherProject.id }), expect: NOT_FOUND },
    },
    getGift: {
      foreign: { input: (_w, extra) => ({ id: extra.b.giftId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.giftId }), expect: NOT_FOUND },
    },
  },
});
