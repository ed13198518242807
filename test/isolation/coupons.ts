import type { Principal } from '../../shared/auth/principal.js';
import { createCoupon } from '../../shared/domain/coupons/repository.js';
import type { Runtime } from '../../shared/runtime.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A coupon with one code in a project (no payment provider: stored only). */
async function seedCoupon(runtime: Runtime, principal: Principal, projectId: string): Promise<string> {
  const coupon = await createCoupon(
    runtime,
    principal,
    projectId,
    {
      name: 'Isolation coupon',
      percent_off: 10,
      duration: 'forever',
      max_redemptions: null,
      redeem_by: null,
      applies_to_plans: [],
      promotion_codes: [{ code: 'ISOLATED', first_time_transaction: false, max_redemptions: null, expires_at: null }],
    },
    { adapters: {} },
  );
  return coupon.id;
}

export default defineIsolationCases<{ couponOfB: string }>({
  seed: async (runtime, w) => ({ couponOfB: await seedCoupon(runtime, w.b.principal, w.b.project.id) }),
  secretsOfB: (extra) => [extra.couponOfB],
  operations: {
    listCoupons: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    createCoupon: {
      foreign: {
        input: (w) => ({ project_id: w.b.project.id, name: 'Hijack', percent_off: 100, duration: 'forever' }),
        expect: NOT_FOUND,
      },
    },
    getCoupon: {
      foreign: { input: (w, extra) => ({ project_id: w.b.project.id, coupon_id: extra.couponOfB }), expect: NOT_FOUND },
    },
    createPromotionCode: {
      foreign: {
        input: (w, extra) => ({ project_id: w.b.project.id, coupon_id: extra.couponOfB, code: 'HIJACK' }),
        expect: NOT_FOUND,
      },
    },
    archiveCoupon: {
      foreign: { input: (w, extra) => ({ project_id: w.b.project.id, coupon_id: extra.couponOfB }), expect: NOT_FOUND },
    },
  },
});
