import { defineModule, defineOperation } from '../../operations/definition.js';
import { PlanIdParams } from '../plans/schema.js';
import { CheckoutSession, CreateCheckoutSessionRequest } from './schema.js';

/**
 * The checkout-session operation (DESIGN D26): a hosted checkout of one plan at the project's payment
 * provider, for creators who embed their own "Buy" button. REST only (no tool); nothing is stored.
 */
export const checkoutSessionsModule = defineModule({
  folder: 'checkout-sessions',
  operations: {
    createCheckoutSession: defineOperation({
      id: 'createCheckoutSession',
      summary:
        'Create a hosted checkout (Stripe Checkout) for an active priced plan of a Stripe-connected project; the subscription is created when the provider reports the completed checkout.',
      tag: 'Plans',
      ability: 'project-subscription:create',
      teamWide: false,
      params: PlanIdParams,
      body: CreateCheckoutSessionRequest,
      output: CheckoutSession,
      events: [],
      rest: { method: 'POST', path: '/v1/plans/{id}/checkout-sessions', successStatus: 201 },
      callsProvider: true,
    }),
  },
});
