import { defineFacts } from '../define-facts.js';

/**
 * Coupons' keys (DESIGN D14, D33): one partition per project holds its coupons (`COUPON#<uuid>`) and its promotion
 * codes keyed by the upper-case code (`PROMOTION_CODE#<CODE>`), so a code is unique per project (a conditional put)
 * and found by what the buyer typed with one GetItem. No abilities of their own: coupons are managed with the plans'.
 */
export const couponsFacts = defineFacts({
  keys: {
    coupon: (teamId: string, projectId: string, couponId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#COUPON`,
      sk: `COUPON#${couponId}`,
    }),
    promotionCode: (teamId: string, projectId: string, code: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#COUPON`,
      sk: `PROMOTION_CODE#${code}`,
    }),
    couponPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#COUPON`,
  },
  sortKeyPrefix: { coupon: 'COUPON#', promotionCode: 'PROMOTION_CODE#' },
  entity: { coupon: 'coupon', promotionCode: 'promotion_code' },
});
