import { ListQuery } from '../../schemas/common.js';
import { defineModule, defineOperation } from '../../operations/definition.js';
import { ProjectIdParams } from '../projects/schema.js';
import { Coupon, CouponList, CouponParams, CreateCouponRequest, CreatePromotionCodeRequest } from './schema.js';

/**
 * The coupon operations (DESIGN D13, D33): a project's coupons and their promotion codes, managed with the plans'
 * abilities (the interface fixes the ability catalogue and the tools). REST only.
 */
export const couponsModule = defineModule({
  folder: 'coupons',
  operations: {
    listCoupons: defineOperation({
      id: 'listCoupons',
      summary: 'List a project’s coupons with their promotion codes.',
      tag: 'Coupons',
      ability: 'project-subscription-plan:view-any',
      teamWide: false,
      params: ProjectIdParams,
      query: ListQuery,
      output: CouponList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/coupons', successStatus: 200 },
    }),
    createCoupon: defineOperation({
      id: 'createCoupon',
      summary:
        'Create a coupon (percent_off, or amount_off with currency; once, repeating or forever; limits; plans) with its promotion codes. A Stripe-connected project’s coupon and codes are created at Stripe first, which then bills the discount.',
      tag: 'Coupons',
      ability: 'project-subscription-plan:create',
      teamWide: false,
      params: ProjectIdParams,
      body: CreateCouponRequest,
      output: Coupon,
      events: [],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/coupons', successStatus: 201 },
    }),
    getCoupon: defineOperation({
      id: 'getCoupon',
      summary: 'Read one coupon with its promotion codes and redemption counts.',
      tag: 'Coupons',
      ability: 'project-subscription-plan:view',
      teamWide: false,
      params: CouponParams,
      output: Coupon,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/coupons/{coupon_id}', successStatus: 200 },
    }),
    createPromotionCode: defineOperation({
      id: 'createPromotionCode',
      summary: 'Add a customer-facing promotion code to an active coupon (at Stripe first when Stripe bills it).',
      tag: 'Coupons',
      ability: 'project-subscription-plan:update',
      teamWide: false,
      params: CouponParams,
      body: CreatePromotionCodeRequest,
      output: Coupon,
      events: [],
      rest: {
        method: 'POST',
        path: '/v1/projects/{project_id}/coupons/{coupon_id}/promotion-codes',
        successStatus: 201,
      },
    }),
    archiveCoupon: defineOperation({
      id: 'archiveCoupon',
      summary:
        'Archive a coupon and its codes: no new redemptions; discounts already given keep running (at Stripe: the coupon is deleted, its codes deactivated).',
      tag: 'Coupons',
      ability: 'project-subscription-plan:update',
      teamWide: false,
      params: CouponParams,
      output: Coupon,
      events: [],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/coupons/{coupon_id}/archive', successStatus: 200 },
    }),
  },
});
