import { logger } from '../../logger.js';
import { ProblemError } from '../../errors.js';
import { entity, keys } from '../../store/keys.js';
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
 * Adds `metric`'s counter change to `tx` (D20): `+1` under one condition naming every tier's limit (no tier read) and `cap` (D8); `-1` only needs the team.
 * Wrap the unit of work in {@link withinTierLimit}.
 */
export function countUsage(
  tx: Transaction,
  teamId: string,
  metric: UsageMetric,
  delta: 1 | -1,
  options: { cap?: number } = {},
): void {
  const names: Record<string, string> = { '#count': USAGE_COUNTERS[metric] };
  if (delta === -1) {
    tx.update(keys.team(teamId), {
      expression: 'ADD #count :delta',
      condition: 'attribute_exists(pk)',
      names,
      values: { ':delta': -1 },
    });
    return;
  }
  names['#tier'] = TIER_ATTRIBUTE;
  const values: Record<string, unknown> = { ':delta': 1 };
  const below = (name: string) => `(attribute_not_exists(#count) OR #count < ${name})`;
  const tiers = BILLING_TIERS.map((tier) => {
    values[`:tier_${tier}`] = tier;
    const isTier =
      tier === DEFAULT_TIER ? `(attribute_not_exists(#tier) OR #tier = :tier_${tier})` : `#tier = :tier_${tier}`;
    const limit = TIER_LIMITS[tier][metric];
    if (limit === null) return isTier;
    values[`:limit_${tier}`] = limit;
    return `(${isTier} AND ${below(`:limit_${tier}`)})`;
  });
  const conditions = ['attribute_exists(pk)', `(${tiers.join(' OR ')})`];
  if (options.cap !== undefined) {
    values[':cap'] = options.cap;
    conditions.push(below(':cap'));
  }
  tx.update(keys.team(teamId), {
    expression: 'ADD #count :delta',
    condition: conditions.join(' AND '),
    names,
    values,
    onConditionFailed: () => new UsageCounterRefused(metric),
  });
}

/**
 * Runs `work` (holding a {@link countUsage} `+1`) and explains a refused counter (D20): `cap.problem()` (D8 cap) or TIER_LIMIT_REACHED (402), emitting
 * `billing.usage_limit_reached` once per metric and period outside the request's transaction. Other errors pass through.
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

/** Emits `billing.usage_limit_reached` unless it was emitted for `metric` in the current period already. Never throws. */
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
        tx.update(keys.billingAccount(teamId), {
          expression: 'SET #marker = :period, #entity = :entity, #team_id = :team_id',
          condition: 'attribute_not_exists(#marker) OR #marker <> :period',
          names: { '#marker': `limit_reached_${metric}`, '#entity': 'entity', '#team_id': 'team_id' },
          values: { ':period': account.current_period_start, ':entity': entity.billingAccount, ':team_id': teamId },
        });
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
