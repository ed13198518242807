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

/** A subscriber's reference item (`keys.subscriberRef`): the project of a subscriber id. */
const StoredSubscriberRef = z.object({ project_id: Subscriber.shape.project_id });

/** Parses a subscriber's reference item. */
export const parseStoredSubscriberRef = recordParser(entity.subscriberRef, StoredSubscriberRef);
