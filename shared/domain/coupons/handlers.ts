import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import { couponsModule } from './operations.js';
import * as coupons from './repository.js';

type Operations = typeof couponsModule.operations;

/** `GET /v1/projects/{project_id}/coupons`. */
export const listCoupons: OperationHandler<Operations['listCoupons']> = async (
  { project_id, ...query },
  { runtime, principal },
) => coupons.listCoupons(runtime.store, principal, project_id, query);

/** `POST /v1/projects/{project_id}/coupons` (Stripe first, D33). */
export const createCoupon: OperationHandler<Operations['createCoupon']> = async (
  { project_id, ...body },
  { runtime, principal },
) => coupons.createCoupon(runtime, principal, project_id, body, { adapters: paymentProviderAdapters(runtime) });

/** `GET /v1/projects/{project_id}/coupons/{coupon_id}`. */
export const getCoupon: OperationHandler<Operations['getCoupon']> = async (input, { runtime, principal }) =>
  coupons.getCoupon(runtime.store, principal, input.project_id, input.coupon_id);

/** `POST /v1/projects/{project_id}/coupons/{coupon_id}/promotion-codes`. */
export const createPromotionCode: OperationHandler<Operations['createPromotionCode']> = async (
  { project_id, coupon_id, ...body },
  { runtime, principal },
) =>
  coupons.addPromotionCode(runtime, principal, project_id, coupon_id, body, {
    adapters: paymentProviderAdapters(runtime),
  });

/** `POST /v1/projects/{project_id}/coupons/{coupon_id}/archive`. */
export const archiveCoupon: OperationHandler<Operations['archiveCoupon']> = async (input, { runtime, principal }) =>
  coupons.archiveCoupon(runtime, principal, input.project_id, input.coupon_id, {
    adapters: paymentProviderAdapters(runtime),
  });

/** Every handler of the coupons module. */
export const couponsHandlers = {
  listCoupons,
  createCoupon,
  getCoupon,
  createPromotionCode,
  archiveCoupon,
} satisfies HandlersOf<typeof couponsModule>;
