import { defineModule, defineOperation } from '../../operations/definition.js';
import { ACCESS_EVENTS } from './access-events.js';
import { subscriptionsInternalOperations } from './internal-operations.js';
import {
  CancelSubscriptionRequest,
  ChangeSubscriptionPlanRequest,
  CreateSubscriptionRequest,
  ListSubscriptionsQuery,
  ProjectAccess,
  ProjectAccessQuery,
  Subscription,
  SubscriptionIdParams,
  SubscriptionList,
  SubscriptionProjectParams,
  SubscriptionReasonRequest,
} from './schema.js';

/**
 * The subscription operations (DESIGN D13, D15): listed and created under the project; actions are POSTs on
 * `/v1/subscriptions/{id}`, each one D15 transition (CONFLICT otherwise) in one unit of work, with `Idempotency-Key`
 * `'in-transaction'` (D3: the completion joins the transaction; a concurrent duplicate replays rather than
 * IDEMPOTENCY_KEY_IN_USE).
 */
export const subscriptionsModule = defineModule({
  folder: 'subscriptions',
  operations: {
    listSubscriptions: defineOperation({
      id: 'listSubscriptions',
      summary: 'List a project’s subscriptions, oldest first, optionally of one subscriber, plan or status.',
      tag: 'Subscriptions',
      ability: 'project-subscription:view-any',
      teamWide: false,
      params: SubscriptionProjectParams,
      query: ListSubscriptionsQuery,
      output: SubscriptionList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/subscriptions', successStatus: 200 },
      tool: {
        name: 'list_subscriptions',
        title: 'List subscriptions',
        kind: 'read',
        description:
          'List a project\u2019s subscriptions, optionally only one subscriber\u2019s, one plan\u2019s or one status\u2019s.',
      },
    }),
    createSubscription: defineOperation({
      id: 'createSubscription',
      summary:
        'Grant a subscription to a subscriber (a creator grant on a priced plan, or a free plan): active, trialing with the plan’s trial, or scheduled until starts_at (emits subscription.created).',
      tag: 'Subscriptions',
      ability: 'project-subscription:create',
      teamWide: false,
      params: SubscriptionProjectParams,
      body: CreateSubscriptionRequest,
      output: Subscription,
      events: ['subscription.created', ...ACCESS_EVENTS],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/subscriptions', successStatus: 201 },
    }),
    getSubscription: defineOperation({
      id: 'getSubscription',
      summary: 'Read one subscription: status, previous status, periods, trial and fixed term.',
      tag: 'Subscriptions',
      ability: 'project-subscription:view',
      teamWide: false,
      params: SubscriptionIdParams,
      output: Subscription,
      events: [],
      rest: { method: 'GET', path: '/v1/subscriptions/{id}', successStatus: 200 },
      tool: {
        name: 'get_subscription',
        title: 'Get subscription',
        kind: 'read',
        description: 'Read one subscription.',
      },
    }),
    cancelSubscription: defineOperation({
      id: 'cancelSubscription',
      summary:
        'Cancel a subscription at the end of its period (trialing or active → pending_cancellation, subscription.cancellation_scheduled) or at once with at_period_end false (subscription.canceled).',
      tag: 'Subscriptions',
      ability: 'project-subscription:cancel',
      teamWide: false,
      params: SubscriptionIdParams,
      body: CancelSubscriptionRequest,
      output: Subscription,
      events: ['subscription.cancellation_scheduled', 'subscription.canceled', ...ACCESS_EVENTS],
      rest: { method: 'POST', path: '/v1/subscriptions/{id}/cancel', successStatus: 200 },
      idempotency: 'in-transaction',
      tool: {
        name: 'cancel_subscription',
        title: 'Cancel subscription',
        kind: 'destructive',
        description: 'Cancel a subscription, at once or at the end of the current period.',
      },
    }),
    pauseSubscription: defineOperation({
      id: 'pauseSubscription',
      summary: 'Pause an active or past_due subscription: no access until resumed (emits subscription.paused).',
      tag: 'Subscriptions',
      ability: 'project-subscription:pause',
      teamWide: false,
      params: SubscriptionIdParams,
      body: SubscriptionReasonRequest,
      output: Subscription,
      events: ['subscription.paused', ...ACCESS_EVENTS],
      rest: { method: 'POST', path: '/v1/subscriptions/{id}/pause', successStatus: 200 },
      idempotency: 'in-transaction',
      tool: {
        name: 'pause_subscription',
        title: 'Pause subscription',
        kind: 'update',
        description: 'Pause a live subscription: no charges and no access until it is resumed.',
      },
    }),
    resumeSubscription: defineOperation({
      id: 'resumeSubscription',
      summary:
        'Resume a paused subscription (→ active, a new period) or withdraw a scheduled cancellation (→ active or trialing); emits subscription.resumed.',
      tag: 'Subscriptions',
      ability: 'project-subscription:pause',
      teamWide: false,
      params: SubscriptionIdParams,
      output: Subscription,
      events: ['subscription.resumed', ...ACCESS_EVENTS],
      rest: { method: 'POST', path: '/v1/subscriptions/{id}/resume', successStatus: 200 },
      idempotency: 'in-transaction',
      tool: {
        name: 'resume_subscription',
        title: 'Resume subscription',
        kind: 'update',
        description: 'Resume a paused subscription, or withdraw a cancellation scheduled for the period end.',
      },
    }),
    suspendSubscription: defineOperation({
      id: 'suspendSubscription',
      summary:
        'Suspend a subscription (trialing, active, pending_cancellation, past_due or paused → suspended; emits subscription.suspended).',
      tag: 'Subscriptions',
      ability: 'project-subscription:update',
      teamWide: false,
      params: SubscriptionIdParams,
      body: SubscriptionReasonRequest,
      output: Subscription,
      events: ['subscription.suspended', ...ACCESS_EVENTS],
      rest: { method: 'POST', path: '/v1/subscriptions/{id}/suspend', successStatus: 200 },
      idempotency: 'in-transaction',
    }),
    unsuspendSubscription: defineOperation({
      id: 'unsuspendSubscription',
      summary: 'Lift a suspension (suspended → active, a new period; emits subscription.resumed).',
      tag: 'Subscriptions',
      ability: 'project-subscription:update',
      teamWide: false,
      params: SubscriptionIdParams,
      output: Subscription,
      events: ['subscription.resumed', ...ACCESS_EVENTS],
      rest: { method: 'POST', path: '/v1/subscriptions/{id}/unsuspend', successStatus: 200 },
      idempotency: 'in-transaction',
    }),
    changeSubscriptionPlan: defineOperation({
      id: 'changeSubscriptionPlan',
      summary:
        'Move a trialing, active, pending_cancellation or past_due subscription to another plan of its project and currency (emits subscription.upgraded for a price per day not lower, else subscription.downgraded).',
      tag: 'Subscriptions',
      ability: 'project-subscription:update',
      teamWide: false,
      params: SubscriptionIdParams,
      body: ChangeSubscriptionPlanRequest,
      output: Subscription,
      events: ['subscription.upgraded', 'subscription.downgraded', 'member.access_granted', 'member.access_revoked'],
      rest: { method: 'POST', path: '/v1/subscriptions/{id}/change-plan', successStatus: 200 },
      idempotency: 'in-transaction',
    }),
    checkProjectAccess: defineOperation({
      id: 'checkProjectAccess',
      summary:
        'Check whether a subscriber (or a member, through its subscriber) has access to the project now, and why: status, until when, plan (the web platform’s access check).',
      tag: 'Subscriptions',
      ability: 'project-subscription:view',
      teamWide: false,
      params: SubscriptionProjectParams,
      query: ProjectAccessQuery,
      output: ProjectAccess,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/access', successStatus: 200 },
    }),
  },
  internal: subscriptionsInternalOperations,
});
