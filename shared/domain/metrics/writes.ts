import { addMetricsDelta } from '../../store/metrics.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { Payment } from '../payments/schema.js';
import type { Plan } from '../plans/schema.js';
import type { Subscription } from '../subscriptions/schema.js';
import { paymentMetricsChange, priceOf, subscriptionMetricsChange } from './decisions.js';

/**
 * The metrics writes (DESIGN D14): a change's deltas ({@link subscriptionMetricsChange},
 * {@link paymentMetricsChange}) added to the project's and the team's counters in the transaction of the
 * change itself (`addMetricsDelta`), so the counters move exactly when the change commits.
 */

/**
 * Adds to `tx` the metrics of a subscription's change (`before` null: created), each side counted at its plan's price
 * version.
 */
export function writeSubscriptionMetrics(
  tx: Transaction,
  teamId: string,
  before: { subscription: Subscription; plan: Plan } | null,
  after: { subscription: Subscription; plan: Plan },
): void {
  const counted = ({ subscription, plan }: { subscription: Subscription; plan: Plan }) => ({
    subscription,
    price: priceOf(plan, subscription.price_version),
  });
  const delta = subscriptionMetricsChange(before && counted(before), counted(after));
  addMetricsDelta(tx, teamId, after.subscription.project_id, after.subscription.id, delta, 'S');
}

/** Adds to `tx` the metrics of a payment's change (`before` null: recorded). */
export function writePaymentMetrics(tx: Transaction, teamId: string, before: Payment | null, after: Payment): void {
  addMetricsDelta(tx, teamId, after.project_id, after.subscription_id, paymentMetricsChange(before, after), 'P');
}
