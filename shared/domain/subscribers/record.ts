import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Subscriber } from './schema.js';

/**
 * A subscriber item as stored (`SUBSCRIBER#<uuid>` in its project's subscriber partition; DESIGN D10,
 * D14, D17): the public fields with `email` and `phone` always stored (shown per D10), the fields added
 * after the first subscribers were stored absent on older items. `revision`, `email_lower` and the
 * live-plan counters are read by the writes and the list filters, not here.
 */
const StoredSubscriber = z.partial(Subscriber, {
  display_name: true,
  platform_user_id: true,
  consent: true,
  provider_customer_id: true,
  member_id: true,
  status: true,
  banned_at: true,
});
/** A stored subscriber (see {@link StoredSubscriber}). */
export type StoredSubscriberRecord = z.infer<typeof StoredSubscriber>;

/** Parses a subscriber item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredSubscriber = recordParser(entity.subscriber, StoredSubscriber);

/** A subscriber item read for its member (projection `member_id`; absent or null: none yet). */
export const parseStoredSubscriberMember = recordParser(
  entity.subscriber,
  z.pick(StoredSubscriber, { member_id: true }),
);

/** A subscriber's reference item (`keys.subscriberRef`): the project of a subscriber id. */
const StoredSubscriberRef = z.object({ project_id: Subscriber.shape.project_id });

/** Parses a subscriber's reference item. */
export const parseStoredSubscriberRef = recordParser(entity.subscriberRef, StoredSubscriberRef);

/**
 * The name of the stored subscriber's attribute counting its live (non-terminal) subscriptions to plan
 * `planId` (a number; absent = none). Top-level, so `ADD` needs no parent map on items written before it
 * existed; the subscriber list's `plan_id` filter is `<attribute> > 0`.
 */
export function livePlanAttribute(planId: string): string {
  return `live_plan#${planId}`;
}

/**
 * Attributes of the subscriber's access summary (`keys.subscriberAccess`; D15, D17): DynamoDB string sets of the ids of
 * its subscriptions granting access (`granting`) and PAID access (`paid`), maintained by every creation and
 * access-changing transition. An empty set is no attribute (absent reads as none).
 */
export const subscriberAccessAttribute = {
  granting: 'granting_subscription_ids',
  paid: 'paid_subscription_ids',
} as const;

/**
 * A subscriber's access summary as stored (`keys.subscriberAccess`, DESIGN D15, D17): its status and
 * member as last written (absent until written) and the two subscription-id sets (absent: none).
 */
const StoredSubscriberAccess = z.object({
  status: z.optional(Subscriber.shape.status),
  member_id: z.optional(Subscriber.shape.member_id),
  [subscriberAccessAttribute.granting]: z.optional(z.set(Uuid)),
  [subscriberAccessAttribute.paid]: z.optional(z.set(Uuid)),
});

/** Parses a subscriber's access summary (throws StoredRecordError naming its key when it does not match). */
export const parseStoredSubscriberAccess = recordParser(entity.subscriberAccess, StoredSubscriberAccess);
