import { isoTime } from '../../clock.js';
import type { Item } from '../../store/requests.js';
import { addInterval } from '../subscriptions/lifecycle.js';
import {
  parseStoredInvoice,
  TIER_ATTRIBUTE,
  USAGE_COUNTERS,
  type StoredBilling,
  type StoredBillingTeam,
} from './record.js';
import {
  DEFAULT_TIER,
  TIER_LIMITS,
  USAGE_METRICS,
  type BillingAccount,
  type BillingInvoice,
  type BillingTier,
  type BillingUsage,
  type UsageMetric,
} from './schema.js';

/**
 * Stored shape of the creator's own billing (D20) and its pure mappers. The team item holds the tier (absent = `free`)
 * and usage counters ({@link USAGE_COUNTERS}, see `countUsage`); the billing account item holds status, grace period,
 * period anchor (whole months from `anchor_at`, else team creation), unpaid invoices, per-metric "limit reached"
 * markers and `revision`; invoices are listed newest first through the sparse GSI.
 */

/** How each metric is named in problem details. */
export const METRIC_NOUNS: Record<UsageMetric, string> = {
  projects: 'projects',
  subscribers: 'subscribers',
  webhook_endpoints: 'webhook endpoints',
  team_members: 'team members',
};

/** The deadline kind of a billing period's end, which invoices the next period (see `DeadlineKind`). */
export const PERIOD_DEADLINE = 'billing.period' as const;
/** The deadline kind of a grace period's end, which locks a team still unpaid (`decideGracePeriodEnd`). */
export const GRACE_DEADLINE = 'billing.grace_period' as const;

/**
 * What the billing use cases read: the team item and the billing account item (absent when never written), both parsed.
 */
export interface BillingRead {
  team: StoredBillingTeam;
  billing: StoredBilling;
}

/** The tier recorded on a team item (absent: {@link DEFAULT_TIER}). */
export function tierOf(team: StoredBillingTeam): BillingTier {
  return team[TIER_ATTRIBUTE] ?? DEFAULT_TIER;
}

/** A counter of the team item (absent = 0; never below 0 in what is shown). */
export function usageCount(team: StoredBillingTeam, metric: UsageMetric): number {
  return Math.max(0, team[USAGE_COUNTERS[metric]] ?? 0);
}

/**
 * The monthly period containing `atMs` for periods anchored at `anchorMs` (epoch MILLISECONDS): whole
 * calendar months from the anchor (day clamped to the month's end, as subscriptions renew). Before the
 * anchor, the first period.
 */
export function periodContaining(anchorMs: number, atMs: number): { startMs: number; endMs: number } {
  const anchor = new Date(anchorMs);
  const at = new Date(atMs);
  let months = Math.max(
    0,
    (at.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + at.getUTCMonth() - anchor.getUTCMonth(),
  );
  while (months > 0 && addInterval(anchorMs, 'month', months) > atMs) months--;
  while (addInterval(anchorMs, 'month', months + 1) <= atMs) months++;
  return { startMs: addInterval(anchorMs, 'month', months), endMs: addInterval(anchorMs, 'month', months + 1) };
}

/** The anchor of the monthly periods, epoch MILLISECONDS: the account's `anchor_at`, else the team's creation. */
export function anchorOf(read: BillingRead): number {
  return Date.parse(read.billing.anchor_at ?? read.team.created_at);
}

/** The public billing account of what was read, at `nowMs`. */
export function accountOf(teamId: string, read: BillingRead, nowMs: number): BillingAccount {
  const tier = tierOf(read.team);
  const period = periodContaining(anchorOf(read), nowMs);
  return {
    team_id: teamId,
    tier,
    status: read.billing.status ?? 'ok',
    limits: { ...TIER_LIMITS[tier] },
    current_period_start: isoTime(period.startMs),
    current_period_end: isoTime(period.endMs),
    grace_period_ends_at: read.billing.grace_period_ends_at ?? null,
    locked_at: read.billing.locked_at ?? null,
  };
}

/** The public usage of a team item: each metric's counter (absent = 0, never below 0). */
export function usageOf(team: StoredBillingTeam): BillingUsage {
  return Object.fromEntries(USAGE_METRICS.map((metric) => [metric, usageCount(team, metric)])) as BillingUsage;
}

/** The public invoice of a stored invoice item, parsed through its stored-record schema. */
export function toInvoice(item: Item): BillingInvoice {
  const stored = parseStoredInvoice(item);
  return {
    ...stored,
    due_at: stored.due_at ?? null,
    attempt_count: stored.attempt_count ?? 0,
    last_payment_error: stored.last_payment_error ?? null,
    paid_at: stored.paid_at ?? null,
  };
}
