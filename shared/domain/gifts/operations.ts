import { defineModule, defineOperation } from '../../operations/definition.js';
import { PlanIdParams } from '../plans/schema.js';
import {
  CreateGiftCheckoutRequest,
  Gift,
  GiftCheckoutSession,
  GiftIdParams,
  GiftList,
  GiftProjectParams,
  ListGiftsQuery,
} from './schema.js';

/**
 * The gift operations (DESIGN D33): buying a plan as a gift through a hosted checkout, and reading gifts with the
 * access-code abilities (a gift is delivered as an access code). REST only: the interface fixes the tools.
 */
export const giftsModule = defineModule({
  folder: 'gifts',
  operations: {
    createGiftCheckoutSession: defineOperation({
      id: 'createGiftCheckoutSession',
      summary:
        'Sell one term of an active priced plan of a Stripe-connected project as a gift: stores the gift (pending payment) and opens a one-off Stripe Checkout; the recipient gets a one-use access code on the chosen day once the provider reports the payment.',
      tag: 'Plans',
      ability: 'project-subscription:create',
      teamWide: false,
      params: PlanIdParams,
      body: CreateGiftCheckoutRequest,
      output: GiftCheckoutSession,
      events: [],
      rest: { method: 'POST', path: '/v1/plans/{id}/gift-checkout-sessions', successStatus: 201 },
      callsProvider: true,
    }),
    listGifts: defineOperation({
      id: 'listGifts',
      summary: 'List a project\u2019s gifts: buyer, recipient, delivery time, amount paid and status (never the code).',
      tag: 'Access codes',
      ability: 'project-access-code:view-any',
      teamWide: false,
      params: GiftProjectParams,
      query: ListGiftsQuery,
      output: GiftList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/gifts', successStatus: 200 },
    }),
    getGift: defineOperation({
      id: 'getGift',
      summary: 'Get one gift (never the code: only the id of the access code it delivered).',
      tag: 'Access codes',
      ability: 'project-access-code:view',
      teamWide: false,
      params: GiftIdParams,
      output: Gift,
      events: [],
      rest: { method: 'GET', path: '/v1/gifts/{id}', successStatus: 200 },
    }),
  },
});
