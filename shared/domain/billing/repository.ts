import { logger } from '../../logger.js';
import { ProblemError } from '../../errors.js';
import { billingStore } from '../../store/billing.js';
import { outsideRequestScope } from '../../store/request-scope.js';
import { ConditionFailedError } from '../../store/store.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { ConcurrentChange } from '../roles/policy.js';
import { METRIC_NOUNS, accountOf, tierOf, usageCount, type BillingRead } from './account.js';
import { TIER_ATTRIBUTE, USAGE_COUNTERS } from './record.js';
import { readBilling } from './reads.js';
import { BILLING_TIERS, DEFAULT_TIER, TIER_LIMITS, type UsageMetric } from './schema.js';

/**
 * Tier limits (DESIGN D20): the usage counters on the team item, changed in the creating or deleting
 * transaction under a condition naming every tier's limit, and the explanation of a refusal.
 * The account, invoices and deadlines live beside it (account, reads, decisions, changes, deadlines).
 */

/**
 * A create refused by the tier-limit condition of its counter ({@link countUsage}): TIER_LIMIT_REACHED,
 * refined by {@link withinTierLimit} (which knows the usage and the limit, and emits the notice).
 */
class UsageCounterRefused extends ProblemError {
  constructor(readonly metric: UsageMetric) {
    super('TIER_LIMIT_REACHED', `The team\u2019s tier does not allow more ${METRIC_NOUNS[metric]}.`);
  }
}

/**
 * Adds `metric`'s counter change to `tx` (D20): `+1` under one condition naming every tier's limit (no tier read) and
 * `cap` (D8); `-1` only needs the team. Wrap the unit of work in {@link withinTierLimit}.
 */
export function countUsage(
  tx: Transaction,
  teamId: string,
  metric: UsageMetric,
  delta: 1 | -1,
  options: { cap?: number } = {},
): void {
  if (delta === -1) {
    billingStore.decrementUsage(tx, teamId, USAGE_COUNTERS[metric]);
    return;
  }
  const limits = BILLING_TIERS.map((tier) => ({
    tier,
    limit: TIER_LIMITS[tier][metric],
    isDefault: tier === DEFAULT_TIER,
  }));
  billingStore.incrementUsage(
    tx,
    teamId,
    { attribute: USAGE_COUNTERS[metric], tierAttribute: TIER_ATTRIBUTE, limits, cap: options.cap },
    () => new UsageCounterRefused(metric),
  );
}

/**
 * Runs `work` (holding a {@link countUsage} `+1`) and explains a refused counter (D20): `cap.problem()` (D8 cap) or
 * TIER_LIMIT_REACHED (402), emitting `billing.usage_limit_reached` once per metric and period outside the request's
 * transaction. Other errors pass through.
 */
export async function withinTierLimit<T>(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  metric: UsageMetric,
  work: () => Promise<T>,
  cap?: { max: number; problem: () => ProblemError },
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof UsageCounterRefused) || error.metric !== metric) throw error;
    const read = await readBilling(runtime.store, teamId).catch(() => null);
    if (!read || read.team.deleted_at) throw new ProblemError('CONFLICT', `Team ${teamId} was deleted.`);
    const tier = tierOf(read.team);
    const limit = TIER_LIMITS[tier][metric];
    const usage = usageCount(read.team, metric);
    if (cap && usage >= cap.max && (limit === null || limit >= cap.max)) throw cap.problem();
    if (limit === null) throw new ConcurrentChange(`The team\u2019s ${METRIC_NOUNS[metric]} changed meanwhile; retry.`);
    await noticeUsageLimit(runtime, teamId, read, metric, Math.max(usage, limit), limit);
    throw new ProblemError(
      'TIER_LIMIT_REACHED',
      `The ${tier} tier allows ${limit} ${METRIC_NOUNS[metric]} and the team has ${usage}; delete one or move to a higher tier (POST /v1/billing/tier).`,
    );
  }
}

/**
 * Emits `billing.usage_limit_reached` unless it was emitted for `metric` in the current period already. Never throws.
 */
async function noticeUsageLimit(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  read: BillingRead,
  metric: UsageMetric,
  usage: number,
  limit: number,
): Promise<void> {
  const nowMs = runtime.clock.nowMs();
  const account = accountOf(teamId, read, nowMs);
  try {
    await outsideRequestScope(() =>
      unitOfWork(runtime, teamId, (tx) => {
        billingStore.markNotice(tx, teamId, `limit_reached_${metric}`, account.current_period_start);
        tx.emit({
          type: 'billing.usage_limit_reached',
          projectId: null,
          data: { billing_account: account, metric, usage, limit },
        });
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionFailedError))
      logger.error('usage limit notice not written', { team_id: teamId, metric, error: error as Error });
  }
}
