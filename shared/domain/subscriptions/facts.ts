import { defineFacts } from '../define-facts.js';

/**
 * Subscriptions' abilities and keys (DESIGN D14, D15). One partition per subscription
 * (`TEAM#<team>#SUBSCRIPTION#<uuid>`); a project's listed through the sparse GSI
 * (`...#PROJECT#<project>#SUBSCRIPTIONS`, creation time then id). The subscriber's per-project
 * `SUBSCRIBER_SUBSCRIPTIONS#<subscriber>` partition holds its index items (what the access check needs, rewritten in
 * every transition) and the `SUBSCRIBER` summary (`status`, `member_id`): the web access check is ONE Query.
 */
export const subscriptionsFacts = defineFacts({
  abilities: {
    category: 'subscription',
    label: 'Subscriptions',
    entries: [
      {
        value: 'project-subscription:view-any',
        description: 'List the subscriptions of a project.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project-subscription:view',
        description: 'Read one subscription.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project-subscription:create',
        description: 'Grant a subscription to a subscriber manually.',
        roles: [],
      },
      {
        value: 'project-subscription:update',
        description: 'Change a subscription\u2019s plan (upgrade or downgrade) or billing dates.',
        roles: ['support'],
      },
      {
        value: 'project-subscription:cancel',
        description: 'Cancel a subscription, at once or at the end of the period.',
        roles: ['support'],
      },
      { value: 'project-subscription:pause', description: 'Pause and resume a subscription.', roles: ['support'] },
    ],
  },
  keys: {
    subscription: (teamId: string, subscriptionId: string) => ({
      pk: `TEAM#${teamId}#SUBSCRIPTION#${subscriptionId}`,
      sk: 'SUBSCRIPTION',
    }),
    /** GSI partition of a project's subscriptions. */
    projectSubscriptionsIndex: (teamId: string, projectId: string) =>
      `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIPTIONS`,
    /** GSI sort key of a subscription: its creation time (ISO 8601) then its id. */
    projectSubscriptionsIndexSortKey: (createdAtIso: string, subscriptionId: string) =>
      `${createdAtIso}#${subscriptionId}`,
    /** Partition of a subscriber's subscription index items. */
    subscriberSubscriptionsPartition: (teamId: string, projectId: string, subscriberId: string) =>
      `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
    /** One index item of a subscriber's subscription (creation order). */
    subscriberSubscription: (
      teamId: string,
      projectId: string,
      subscriberId: string,
      createdAtIso: string,
      subscriptionId: string,
    ) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
      sk: `SUBSCRIPTION#${createdAtIso}#${subscriptionId}`,
    }),
    /**
     * The subscriber's access summary item in its subscription partition (sort key `SUBSCRIBER`, apart
     * from `SUBSCRIPTION#…` and `CONVERTED`): the subscriber's `status` and `member_id`, kept equal to the
     * subscriber item's by the same transactions, and the sets of its subscriptions granting (paid) access
     * (`subscriberAccessAttribute` in subscribers/repository.ts).
     */
    subscriberAccess: (teamId: string, projectId: string, subscriberId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
      sk: 'SUBSCRIBER',
    }),
    /** The marker that a subscriber gained paid access once (`member.converted` is emitted once). */
    subscriberConversion: (teamId: string, projectId: string, subscriberId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
      sk: 'CONVERTED',
    }),
    /**
     * The marker that an e-mail address (its SHA-256, trimmed and in lower case: no address in a key) had a trial in a
     * project (D33: one trial per subscriber per project), written with the trialing subscription's creation.
     */
    trialUse: (teamId: string, projectId: string, emailSha256: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#TRIAL_USE#${emailSha256}`,
      sk: 'TRIAL_USE',
    }),
  },
  sortKeyPrefix: {
    subscriberSubscription: 'SUBSCRIPTION#',
    /** The sort key of a subscription item (`keys.subscription`), for cursor checks of the project list. */
    subscription: 'SUBSCRIPTION',
  },
  entity: {
    subscription: 'subscription',
    subscriberSubscription: 'subscriber_subscription',
    subscriberConversion: 'subscriber_conversion',
    subscriberAccess: 'subscriber_access',
    trialUse: 'trial_use',
  },
});
