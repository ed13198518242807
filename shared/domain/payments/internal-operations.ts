import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { ACCESS_EVENTS } from '../subscriptions/access-events.js';

/**
 * A Stripe event as the hook verified it (its signature checked, DESIGN D22): the fields the pipeline reads; the rest
 * is Stripe's and is read by the mapping (`stripe-events.ts`).
 */
const VerifiedStripeEvent = z.looseObject({
  id: z.string().check(z.minLength(1), z.maxLength(255)),
  type: z.string().check(z.minLength(1), z.maxLength(255)),
  created: z.number(),
});

/**
 * A project's payment provider reporting what happened (DESIGN D15, D16, D22, D35): internal operations of the hook's
 * principal (surface `hook`), exempt from the billing lockdown (the money moved at the provider already, D20).
 */
export const paymentsInternalOperations = {
  applyStripeEvent: defineInternalOperation({
    id: 'applyStripeEvent',
    summary:
      'Apply a verified Stripe event of the project (checkout, invoice, subscription, refund): applied, or ignored with the reason.',
    tag: 'Payments',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({ project_id: Uuid, event: VerifiedStripeEvent }),
    output: z.union([z.object({ applied: z.literal(true) }), z.object({ ignored: z.string() })]),
    events: [
      'subscription.created',
      'subscription.activated',
      'subscription.renewed',
      'subscription.past_due',
      'subscription.unpaid',
      'subscription.paused',
      'subscription.resumed',
      'subscription.upgraded',
      'subscription.downgraded',
      'subscription.cancellation_scheduled',
      'subscription.canceled',
      'subscription.expired',
      'subscription.incomplete_expired',
      'payment.succeeded',
      'payment.pending',
      'payment.failed',
      'payment.refunded',
      ...ACCESS_EVENTS,
    ],
    write: true,
    lockdown: 'exempt',
  }),
};
