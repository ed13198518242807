import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import { Plan } from './schema.js';

const planData = z.object({ plan: Plan });

/** Plans' webhook events (`plan.*`): creation, update, activation, sync to the payment-provider catalogue. */
export const plansEvents = [
  defineEvent('plan.created', 'project-subscription-plan:view', true, planData, 'A subscription plan was created.'),
  defineEvent(
    'plan.updated',
    'project-subscription-plan:view',
    true,
    planData,
    'A subscription plan\u2019s name, description, price or trial changed.',
  ),
  defineEvent(
    'plan.activated',
    'project-subscription-plan:view',
    true,
    planData,
    'A plan was activated and is open to new subscriptions.',
  ),
  defineEvent(
    'plan.deactivated',
    'project-subscription-plan:view',
    true,
    planData,
    'A plan was deactivated and is closed to new subscriptions.',
  ),
  defineEvent(
    'plan.synced',
    'project-subscription-plan:view',
    true,
    z.object({
      plan: Plan,
      payment_provider: z.enum(PAYMENT_PROVIDER_VALUES),
      provider_product_id: z.string().check(z.describe('The product id in the provider\u2019s catalogue.')),
      provider_price_id: z.nullable(z.string()).check(z.describe('The price id in the provider\u2019s catalogue.')),
    }),
    'A plan was synced to a payment provider\u2019s catalogue.',
  ),
  defineEvent(
    'plan.sync_failed',
    'project-subscription-plan:view',
    true,
    z.object({
      plan: Plan,
      payment_provider: z.enum(PAYMENT_PROVIDER_VALUES),
      reason: z.string().check(z.describe('Why it failed (the provider\u2019s message; never a credential).')),
      code: z
        .nullable(z.string())
        .check(
          z.describe(
            'The provider\u2019s error code (Stripe\u2019s `code`, e.g. `resource_missing`), or null when it gave none.',
          ),
        ),
    }),
    'Syncing a plan to a payment provider\u2019s catalogue failed.',
  ),
] as const;
