import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Timestamp } from '../../schemas/common.js';
import { Team } from '../teams/schema.js';
import { BILLING_TIERS, BillingAccount, BillingInvoice, type UsageMetric } from './schema.js';

/**
 * An invoice item as stored (in the team's partition, DESIGN D20): the public fields, the payment
 * outcome's fields (`due_at`, `attempt_count`, `last_payment_error`, `paid_at`) absent until set.
 */
const StoredInvoice = z.partial(BillingInvoice, {
  due_at: true,
  attempt_count: true,
  last_payment_error: true,
  paid_at: true,
});

/** Parses an invoice item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredInvoice = recordParser(entity.billingInvoice, StoredInvoice);

/**
 * The billing account item as stored (`keys.billingAccount`, DESIGN D20): every attribute absent until
 * first written (a team that never touched billing has no item; its `revision` is read by `writeBilling`).
 * `invoice_sequence` numbers the team's invoices; `past_due_invoice_ids` are its unpaid ones.
 */
const StoredBillingAccount = z.object({
  status: z.optional(BillingAccount.shape.status),
  anchor_at: z.optional(Timestamp),
  grace_period_ends_at: z.optional(BillingAccount.shape.grace_period_ends_at),
  locked_at: z.optional(BillingAccount.shape.locked_at),
  past_due_invoice_ids: z.optional(z.array(BillingInvoice.shape.id)),
  invoice_sequence: z.optional(z.number().check(z.int(), z.nonnegative())),
  revision: z.optional(z.number().check(z.int(), z.nonnegative())),
});
/** The billing account as stored, and the attributes a billing change writes (see {@link StoredBillingAccount}). */
export type StoredBilling = z.output<typeof StoredBillingAccount>;

/** Parses a billing account item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredBillingAccount = recordParser(entity.billingAccount, StoredBillingAccount);

/** The team item's attribute holding the tier (absent = {@link DEFAULT_TIER}). */
export const TIER_ATTRIBUTE = 'billing_tier';

/**
 * The team item's counter of each metric. `webhook_endpoint_count` is the D8 counter of the 50-endpoint
 * cap, shared with the tier limit (one counter).
 */
export const USAGE_COUNTERS = {
  projects: 'project_count',
  subscribers: 'subscriber_count',
  webhook_endpoints: 'webhook_endpoint_count',
  team_members: 'team_member_count',
} as const satisfies Record<UsageMetric, string>;

/** A usage counter on the team item: a whole number (absent: 0). */
const UsageCounter = z.optional(z.number().check(z.int()));

/**
 * What billing reads of a team item (`keys.team`, DESIGN D19, D20): its creation (the first period's
 * anchor), its deletion, the tier ({@link TIER_ATTRIBUTE}, absent on a team that never changed tier) and
 * the usage counters ({@link USAGE_COUNTERS}, each absent until first counted).
 */
const StoredBillingTeam = z.object({
  created_at: Team.shape.created_at,
  deleted_at: z.optional(Team.shape.deleted_at),
  [TIER_ATTRIBUTE]: z.optional(z.enum(BILLING_TIERS)),
  [USAGE_COUNTERS.projects]: UsageCounter,
  [USAGE_COUNTERS.subscribers]: UsageCounter,
  [USAGE_COUNTERS.webhook_endpoints]: UsageCounter,
  [USAGE_COUNTERS.team_members]: UsageCounter,
});
/** What billing reads of a team item (see {@link StoredBillingTeam}). */
export type StoredBillingTeam = z.output<typeof StoredBillingTeam>;

/** Parses what billing reads of a team item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredBillingTeam = recordParser(entity.team, StoredBillingTeam);
