import type { Subscriber, UpdateSubscriberRequest } from './schema.js';

/**
 * The decision of a subscriber change (DESIGN D17), pure: from the subscriber as read and the request
 * to what changes. No Store: `updateSubscriber` (changes.ts) loads, decides and commits conditional on
 * the revision read, again on a lost race.
 */

/** A subscriber's stored contact data (kept whatever the consent; shown per D10). */
export interface SubscriberContact {
  email: string | null;
  phone: string | null;
}

/**
 * What a change decided: the subscriber and contact data to write, and whether `platform_user_id` moved (the claim and
 * member links move with it).
 */
export interface SubscriberUpdate {
  next: Subscriber;
  nextContact: SubscriberContact;
  platformChanged: boolean;
}

/**
 * The change `input` makes (`null` clears a field, an absent field stays); null when it changes nothing. `updated_at`
 * and `member_id` are the caller's.
 */
export function decideSubscriberUpdate(
  current: Subscriber,
  stored: SubscriberContact,
  input: UpdateSubscriberRequest,
): SubscriberUpdate | null {
  const next: Subscriber = { ...current };
  const nextContact = { ...stored };
  if (input.display_name !== undefined) next.display_name = input.display_name;
  if (input.consent !== undefined) next.consent = input.consent;
  if (input.provider_customer_id !== undefined) next.provider_customer_id = input.provider_customer_id;
  if (input.platform_user_id !== undefined) next.platform_user_id = input.platform_user_id;
  if (input.email !== undefined) nextContact.email = input.email;
  if (input.phone !== undefined) nextContact.phone = input.phone;
  const platformChanged = next.platform_user_id !== current.platform_user_id;
  const changed =
    platformChanged ||
    next.display_name !== current.display_name ||
    next.consent !== current.consent ||
    next.provider_customer_id !== current.provider_customer_id ||
    nextContact.email !== stored.email ||
    nextContact.phone !== stored.phone;
  return changed ? { next, nextContact, platformChanged } : null;
}
