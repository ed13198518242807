/**
 * The canonical subscription statuses.
 *
 * Source: interface "Resources and their fields → Subscription statuses" (13 statuses, `unpaid`
 * and `past_due` among them, `dormant` is not one); served as `service://enums/subscription-status`.
 * The `subscription.*` webhook events cover the transitions between them.
 */

/** The UI colour family of a status. */
export type StatusColor = 'green' | 'blue' | 'yellow' | 'orange' | 'red' | 'gray' | 'purple';

/**
 * The lifecycle group of a status: `setup` (not started yet), `live` (access granted),
 * `at_risk` (payment trouble), `on_hold` (access withheld, may come back), `ended` (final).
 */
export type SubscriptionStatusCategory = 'setup' | 'live' | 'at_risk' | 'on_hold' | 'ended';

/**
 * Every subscription status: `{ value, label, color, category, description }`.
 * Exactly 13 entries.
 */
export const SUBSCRIPTION_STATUSES = [
  {
    value: 'pending',
    label: 'Pending',
    color: 'yellow',
    category: 'setup',
    description:
      'Created; waiting for the payment provider to confirm the first payment (e.g. bank transfer or crypto confirmation).',
  },
  {
    value: 'incomplete',
    label: 'Incomplete',
    color: 'orange',
    category: 'setup',
    description: 'The first payment failed or needs the subscriber\u2019s action; no access yet.',
  },
  {
    value: 'scheduled',
    label: 'Scheduled',
    color: 'purple',
    category: 'setup',
    description: 'Starts at a future date (e.g. a redeemed access code or a pre-sale); no access yet.',
  },
  {
    value: 'trialing',
    label: 'Trial',
    color: 'blue',
    category: 'live',
    description: 'In a free trial; access granted, the first charge comes at trial end.',
  },
  { value: 'active', label: 'Active', color: 'green', category: 'live', description: 'Paid up; access granted.' },
  {
    value: 'pending_cancellation',
    label: 'Cancels at period end',
    color: 'yellow',
    category: 'live',
    description: 'Cancellation requested; access continues until the current period ends.',
  },
  {
    value: 'past_due',
    label: 'Past due',
    color: 'orange',
    category: 'at_risk',
    description:
      'A renewal payment failed; the payment is retried and access continues until grace_period_end (the plan\u2019s grace_days, default 7).',
  },
  {
    value: 'unpaid',
    label: 'Unpaid',
    color: 'red',
    category: 'at_risk',
    description: 'Renewal retries are exhausted; access is withheld until the invoice is paid.',
  },
  {
    value: 'paused',
    label: 'Paused',
    color: 'gray',
    category: 'on_hold',
    description: 'Paused by the creator or the subscriber; no charges and no access until resumed.',
  },
  {
    value: 'suspended',
    label: 'Suspended',
    color: 'red',
    category: 'on_hold',
    description: 'Suspended by the creator (e.g. the subscriber was banned); no access.',
  },
  {
    value: 'canceled',
    label: 'Canceled',
    color: 'gray',
    category: 'ended',
    description: 'Ended by cancellation; final.',
  },
  {
    value: 'expired',
    label: 'Expired',
    color: 'gray',
    category: 'ended',
    description: 'A fixed-term subscription (e.g. from an access code) reached its end; final.',
  },
  {
    value: 'incomplete_expired',
    label: 'Incomplete, expired',
    color: 'gray',
    category: 'ended',
    description: 'The first payment was never completed in time; final.',
  },
] as const satisfies readonly {
  value: string;
  label: string;
  color: StatusColor;
  category: SubscriptionStatusCategory;
  description: string;
}[];

/** One entry of {@link SUBSCRIPTION_STATUSES}. */
type SubscriptionStatusDefinition = (typeof SUBSCRIPTION_STATUSES)[number];

/** Union of every subscription status value, e.g. `'past_due'`. */
export type SubscriptionStatus = SubscriptionStatusDefinition['value'];

/** Every subscription status value, in catalogue order (a tuple usable with `z.enum`). */
export const SUBSCRIPTION_STATUS_VALUES = SUBSCRIPTION_STATUSES.map((status) => status.value) as unknown as readonly [
  SubscriptionStatus,
  ...SubscriptionStatus[],
];
