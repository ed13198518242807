import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from '../teams/schema.js';

/**
 * A completed Stripe Checkout Session's item (`keys.checkoutSession`, DESIGN D26): the subscription it
 * created, written with it and read by the welcome page.
 */
const StoredCheckoutSession = z.object({ team_id: Team.shape.id, subscription_id: z.string() });

/**
 * Parses a completed Checkout Session's item; its key is never named in the error (the session id opens the welcome
 * page).
 */
export const parseStoredCheckoutSession = recordParser(
  entity.checkoutSession,
  StoredCheckoutSession,
  () => 'checkout session (key: its session id, withheld)',
);
