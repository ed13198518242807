import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { Subscriber } from '../subscribers/schema.js';
import { Subscription } from '../subscriptions/schema.js';
import { AccessCode, AccessCodeBatch } from './schema.js';

/** Access codes' webhook events (`access_code.*`, DESIGN D18). */
export const accessCodesEvents = [
  defineEvent(
    'access_code.batch_generated',
    'project-access-code:view',
    true,
    z.object({ batch: AccessCodeBatch }),
    'A batch of access codes was generated.',
  ),
  defineEvent(
    'access_code.redeemed',
    'project-access-code:view',
    true,
    z.object({
      access_code: AccessCode,
      subscriber: Subscriber,
      subscription: z.nullable(Subscription),
    }),
    'An access code was redeemed.',
  ),
  defineEvent(
    'access_code.expired',
    'project-access-code:view',
    true,
    z.object({ access_code: AccessCode }),
    'An access code expired unredeemed.',
  ),
] as const;
