import * as z from '../../schemas/zod.js';
import { Discount } from '../coupons/discount.js';
import { PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import { SUBSCRIPTION_STATUS_VALUES } from '../../catalogues/subscription-statuses.js';
import { listOf, ListQuery, LongText, Timestamp, Uuid } from '../../schemas/common.js';
import { MemberInviteLink } from '../members/schema.js';

/**
 * The subscription's shapes (DESIGN D12, D15): what reads return and `subscription.*` / member events
 * carry (`Subscription`, imported by the webhook catalogue, so the payload shape is this one definition)
 * and the requests. Times are ISO 8601 UTC; periods and trials are whole days of the plan.
 */

/**
 * How a subscription came to be (a closed list, written once): `creator_grant` (granted by the creator
 * on a priced plan, no payment), `free_plan` (a plan priced 0), `access_code` (redeemed code), `provider`
 * (paid through the project's payment provider). The first three need no payment: their trials and
 * periods end by the clock alone.
 */
const SUBSCRIPTION_SOURCES = ['creator_grant', 'free_plan', 'access_code', 'provider'] as const;
/** A subscription source (see {@link SUBSCRIPTION_SOURCES}). */
export type SubscriptionSource = (typeof SUBSCRIPTION_SOURCES)[number];

/** A subscription of a subscriber to a plan, as the API returns it and events carry it (DESIGN D15). */
export const Subscription = z
  .object({
    id: Uuid,
    project_id: Uuid,
    subscriber_id: Uuid,
    plan_id: Uuid,
    status: z.enum(SUBSCRIPTION_STATUS_VALUES).check(z.describe('See service://enums/subscription-status.')),
    previous_status: z
      .nullable(z.enum(SUBSCRIPTION_STATUS_VALUES))
      .check(z.describe('The status before the last transition; null until the first one.')),
    has_access: z
      .boolean()
      .check(z.describe('Whether the status grants access (trialing, active, pending_cancellation, past_due).')),
    source: z
      .enum(SUBSCRIPTION_SOURCES)
      .check(z.describe('How the subscription came to be: creator_grant, free_plan, access_code or provider.')),
    payment_provider: z
      .nullable(z.enum(PAYMENT_PROVIDER_VALUES))
      .check(z.describe('The provider that bills it; null when it needs no payment.')),
    price_version: z
      .number()
      .check(
        z.int(),
        z.positive(),
        z.describe('The plan price version the subscription keeps until its next renewal.'),
      ),
    starts_at: Timestamp.check(z.describe('When access starts (or started).')),
    ends_at: z
      .nullable(Timestamp)
      .check(z.describe('End of a fixed term (the subscription expires then); null for an open-ended subscription.')),
    trial_ends_at: z.nullable(Timestamp).check(z.describe('End of the free trial; null without a trial.')),
    current_period_start: z
      .nullable(Timestamp)
      .check(z.describe('Start of the current period; null before the subscription starts.')),
    current_period_end: z
      .nullable(Timestamp)
      .check(
        z.describe(
          'End of the current period (renewal, or cancellation when pending_cancellation); null before it starts.',
        ),
      ),
    grace_period_end: z
      .nullable(Timestamp)
      .check(
        z.describe(
          'When a past_due subscription loses access unless paid: the failed payment plus the plan\u2019s grace_days; null otherwise.',
        ),
      ),
    discount: z
      .nullable(Discount)
      .check(
        z.describe(
          'The coupon it pays less under while it lasts: dropped at the first period starting at or after its end. null: none.',
        ),
      ),
    cancel_at_period_end: z.boolean().check(z.describe('True while pending_cancellation.')),
    canceled_at: z
      .nullable(Timestamp)
      .check(z.describe('When it was canceled (or the cancellation was scheduled); null otherwise.')),
    cancellation_reason: z.nullable(z.string()).check(z.describe('The reason given when it was canceled, or null.')),
    invite_links: z
      .array(MemberInviteLink)
      .check(
        z.describe(
          'The subscriber\u2019s personal single-use invite links to the project\u2019s linked chats (Telegram), made when this subscription granted access (or when a failed grant was retried); empty when none were made and once access ended. Bearer links: pass them to that subscriber only.',
        ),
      ),
    status_changed_at: Timestamp.check(z.describe('When it entered its current status.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Subscription' });
/** A subscription (see {@link Subscription}). */
export type Subscription = z.infer<typeof Subscription>;

/** A page of subscriptions. */
export const SubscriptionList = listOf(Subscription, 'SubscriptionList');

/** `{id}` path parameters of a subscription. */
export const SubscriptionIdParams = z.strictObject({ id: Uuid.check(z.describe('The subscription id.')) });

/** `{project_id}` path parameters of a project's subscriptions. */
export const SubscriptionProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project the subscriptions belong to.')),
});

/**
 * Body of `POST /v1/projects/{project_id}/subscriptions`: a creator grant (priced plan, no payment) or a
 * free plan's subscription. Starts now, or `scheduled` until a future `starts_at`; `trial` starts with the
 * plan's trial; `ends_at` makes it a fixed term (one-off plans end after their `access_days` by default).
 */
export const CreateSubscriptionRequest = z
  .strictObject({
    subscriber_id: Uuid.check(z.describe('The subscriber (of this project) who gets the subscription.')),
    plan_id: Uuid.check(z.describe('The plan (of this project, active) of the subscription.')),
    starts_at: z
      .optional(Timestamp)
      .check(z.describe('When access starts; a future time creates it scheduled. Default: now.')),
    ends_at: z
      .optional(Timestamp)
      .check(
        z.describe(
          'End of a fixed term (it expires then); must be after starts_at and the trial. Default: none (a one_time plan: starts_at + access_days).',
        ),
      ),
    trial: z
      .optional(z.boolean())
      .check(
        z.describe('Start with the plan\u2019s free trial (trial_days); only for plans with a trial. Default false.'),
      ),
  })
  .register(z.globalRegistry, { id: 'CreateSubscriptionRequest' });
/** A validated subscription creation (see {@link CreateSubscriptionRequest}). */
export type CreateSubscriptionRequest = z.infer<typeof CreateSubscriptionRequest>;

/**
 * Query of `GET /v1/projects/{project_id}/subscriptions` (and the `list_subscriptions` tool's arguments besides
 * `project_id`).
 */
export const ListSubscriptionsQuery = z.extend(ListQuery, {
  subscriber_id: z.optional(Uuid).check(z.describe('Only subscriptions of this subscriber.')),
  plan_id: z.optional(Uuid).check(z.describe('Only subscriptions to this plan.')),
  status: z
    .optional(z.enum(SUBSCRIPTION_STATUS_VALUES))
    .check(z.describe('Only subscriptions with this status (see service://enums/subscription-status).')),
});
/** A validated subscription list query (see {@link ListSubscriptionsQuery}). */
export type ListSubscriptionsQuery = z.infer<typeof ListSubscriptionsQuery>;

const Reason = LongText(500, 1);

/** Body of `POST /v1/subscriptions/{id}/cancel` (and the `cancel_subscription` arguments besides `id`). */
export const CancelSubscriptionRequest = z
  .strictObject({
    at_period_end: z
      .optional(z.boolean())
      .check(
        z.describe(
          'true (default) cancels at the end of the current period (pending_cancellation); false cancels at once.',
        ),
      ),
    reason: z
      .optional(Reason)
      .check(z.describe('Why, up to 500 characters; kept on the subscription as cancellation_reason.')),
  })
  .register(z.globalRegistry, { id: 'CancelSubscriptionRequest' });
/** A validated cancellation (see {@link CancelSubscriptionRequest}). */
export type CancelSubscriptionRequest = z.infer<typeof CancelSubscriptionRequest>;

/** Body of `POST /v1/subscriptions/{id}/pause|suspend` (and the `pause_subscription` arguments besides `id`). */
export const SubscriptionReasonRequest = z
  .strictObject({
    reason: z.optional(Reason).check(z.describe('Why, up to 500 characters; recorded in the activity log.')),
  })
  .register(z.globalRegistry, { id: 'SubscriptionReasonRequest' });
/** A validated pause or suspension (see {@link SubscriptionReasonRequest}). */
export type SubscriptionReasonRequest = z.infer<typeof SubscriptionReasonRequest>;

/** Body of `POST /v1/subscriptions/{id}/change-plan`. */
export const ChangeSubscriptionPlanRequest = z
  .strictObject({
    plan_id: Uuid.check(
      z.describe(
        'The new plan: active, of the same project and currency, not the current one. A higher price per day is an upgrade, else a downgrade.',
      ),
    ),
  })
  .register(z.globalRegistry, { id: 'ChangeSubscriptionPlanRequest' });
/** A validated plan change (see {@link ChangeSubscriptionPlanRequest}). */
export type ChangeSubscriptionPlanRequest = z.infer<typeof ChangeSubscriptionPlanRequest>;

/** Query of `GET /v1/projects/{project_id}/access`: exactly one of the two. */
export const ProjectAccessQuery = z.strictObject({
  subscriber_id: z.optional(Uuid).check(z.describe('The subscriber whose access to check.')),
  member_id: z
    .optional(Uuid)
    .check(z.describe('The member (platform identity) whose access to check, through its linked subscriber.')),
});

/** The answer of the web access check (DESIGN D15, D22): whether access is granted, and why. */
export const ProjectAccess = z
  .object({
    granted: z
      .boolean()
      .check(
        z.describe(
          'Whether the subscriber has access now (a subscription in a status with access, and the subscriber not banned).',
        ),
      ),
    status: z
      .nullable(z.enum(SUBSCRIPTION_STATUS_VALUES))
      .check(z.describe('The status of the deciding subscription, or null when there is none.')),
    ends_at: z
      .nullable(Timestamp)
      .check(
        z.describe(
          'When that access ends unless renewed (a fixed term\u2019s end, else the current period\u2019s end); null when open-ended or without a subscription.',
        ),
      ),
    plan_id: z.nullable(Uuid).check(z.describe('The plan of the deciding subscription, or null.')),
    subscription_id: z
      .nullable(Uuid)
      .check(
        z.describe(
          'The deciding subscription: the one with access lasting longest, else the latest changed; null when none.',
        ),
      ),
    subscriber_id: z
      .nullable(Uuid)
      .check(z.describe('The subscriber checked (null for a member without a linked subscriber).')),
    member_id: z.nullable(Uuid).check(z.describe('The subscriber\u2019s member, or null.')),
  })
  .register(z.globalRegistry, { id: 'ProjectAccess' });
/** A web access check answer (see {@link ProjectAccess}). */
export type ProjectAccess = z.infer<typeof ProjectAccess>;
