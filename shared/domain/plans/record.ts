import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Plan } from './schema.js';

/**
 * A plan item as stored (`TEAM#<team>`, `PLAN#<uuid>`; DESIGN D14, D16, D22): the public fields, those added after the
 * first plans were stored absent on older items (`description`, `access_days`, `trial_days`,
 * `trial_payment_method_required`, `allow_promotion_codes`, `grace_days`, `price_history` and the provider-sync
 * fields). Its `revision` and `live_subscription_count` are read from the item by the writes, not here.
 */
const StoredPlan = z.partial(Plan, {
  description: true,
  access_days: true,
  trial_days: true,
  trial_payment_method_required: true,
  grace_days: true,
  allow_promotion_codes: true,
  price_history: true,
  sync_status: true,
  payment_provider: true,
  provider_product_id: true,
  provider_price_id: true,
  synced_at: true,
  sync_error: true,
});

/** Parses a plan item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredPlan = recordParser(entity.plan, StoredPlan);
