/**
 * The webhook event catalogue: the 71 event kinds, the minimum ability the subscribing creator
 * must hold for each, whether the envelope carries a `project_id`, and a zod schema of each
 * event's `data` object.
 *
 * Source: interface "Events → Families" (70 events in ten families), "Envelope"
 * (`subscription.created` data), "Subscribing" (minimum ability per event), "Data exposure";
 * DESIGN D6 (the 71st event is `webhook_endpoint.test`), D10 (payload exposure), D12 (shapes).
 * Served as `service://enums/webhook-event` and `GET /webhook-events.json`.
 *
 * Payload rules: snake_case fields, ids are UUID strings, timestamps ISO 8601 UTC with `Z`.
 * No schema has a field for payment credentials, fee breakdowns, invitation tokens or passkey
 * material, and parsing strips unknown keys, so a parsed payload can carry none of them.
 * Subscriber `email` and `phone` are optional: present only when the endpoint owner holds
 * `project-user:view` and the subscriber consented (DESIGN D10).
 */
import * as z from '../schemas/zod.js';
import type { Ability } from './abilities.js';
import { PAYMENT_PROVIDER_VALUES } from './payment-providers.js';
import { AccessCode, AccessCodeBatch } from '../domain/access-codes/schema.js';
import { BILLING_TIERS, BillingAccount, BillingInvoice, USAGE_METRICS } from '../domain/billing/schema.js';
import { Plan } from '../domain/plans/schema.js';
import { Subscription } from '../domain/subscriptions/schema.js';
import { Project, ProjectBot, ProjectResource } from '../domain/projects/schema.js';
import { Group } from '../domain/groups/schema.js';
import { Member, MemberInviteLink } from '../domain/members/schema.js';
import { Payment, PaymentRefund } from '../domain/payments/schema.js';
import { Role } from '../domain/roles/schema.js';
import { Subscriber } from '../domain/subscribers/schema.js';
import { TeamMember } from '../domain/team-members/schema.js';
import { Team } from '../domain/teams/schema.js';
import { Currency } from '../schemas/common.js';

// ---------------------------------------------------------------------------------------------
// Shared object schemas (the building blocks of every `data` object)
// ---------------------------------------------------------------------------------------------

const id = () => z.uuid().check(z.describe('UUID.'));
const timestamp = () => z.iso.datetime().check(z.describe('ISO 8601 UTC timestamp.'));
const amount = () => z.number().check(z.int(), z.nonnegative(), z.describe('Amount in the currency\u2019s minor unit (e.g. cents).'));
const currency = () => Currency;

/** A project in webhook payloads: the API's `Project` (with its bot, provider connection and resources; never a credential). */
export const projectObjectSchema = Project;

/** A platform resource (channel, group, server, role…) linked to a project: the API's `ProjectResource`. */
export const projectResourceObjectSchema = ProjectResource;

/** A project's community bot (public identifiers only, never its platform token): the API's `ProjectBot`. */
export const projectBotObjectSchema = ProjectBot;

/**
 * A subscriber (project user): the API's `Subscriber` (DESIGN D17). `email` and `phone` are present only
 * when the subscriber consented, and the fan-out strips them unless the endpoint owner holds
 * `project-user:view` (interface "Data exposure", DESIGN D10).
 */
export const subscriberObjectSchema = Subscriber;

/** A member (platform identity within a project): the API's `Member` (DESIGN D17); never contact data. */
export const memberObjectSchema = Member;

/** A subscription plan: the API's `Plan` (price, billing terms, status, price versions, provider sync state). */
export const planObjectSchema = Plan;

/** A subscription (status, previous_status, periods, trial, fixed term): the API's `Subscription` — the subscriptions module's one definition (DESIGN D15). */
export const subscriptionObjectSchema = Subscription;

/** An access code (never the redeemable code itself: only its last characters) — the access codes module's one definition (DESIGN D18). */
export const accessCodeObjectSchema = AccessCode;

/** A batch of generated access codes (its id and count, never the codes) — the access codes module's one definition. */
export const accessCodeBatchObjectSchema = AccessCodeBatch;

/** A payment from a subscriber (no payment credentials, no fee breakdown): the API's `Payment` — the payments module's one definition (DESIGN D16). */
export const paymentObjectSchema = Payment;

/** The team's own billing account (the creator's tier with the service): the billing module's one definition (DESIGN D20). */
export const billingAccountObjectSchema = BillingAccount;

/** An invoice of the team's own tier: the billing module's one definition (DESIGN D20). */
export const billingInvoiceObjectSchema = BillingInvoice;

// ---------------------------------------------------------------------------------------------
// Data shapes reused by several events
// ---------------------------------------------------------------------------------------------

const projectData = z.object({ project: projectObjectSchema });
const projectBotData = z.object({ project: projectObjectSchema, bot: projectBotObjectSchema });
const projectResourceData = z.object({ project: projectObjectSchema, resource: projectResourceObjectSchema });
const projectProviderData = z.object({ project: projectObjectSchema, payment_provider: z.enum(PAYMENT_PROVIDER_VALUES) });
const planData = z.object({ plan: planObjectSchema });
/** Every subscription transition (DESIGN D15): the subscription (with `status` and `previous_status`), its subscriber, plan and access code. */
const subscriptionTransitionData = z.object({
  subscription: subscriptionObjectSchema,
  subscriber: subscriberObjectSchema,
  plan: planObjectSchema,
  access_code: z.nullable(accessCodeObjectSchema).check(z.describe('The access code redeemed for this subscription, or null.')),
});
/** A plan change: the transition data (with the new `plan`) plus the plan it left. */
const subscriptionPlanChangeData = z.extend(subscriptionTransitionData, {
  previous_plan: planObjectSchema.check(z.describe('The plan the subscription moved from.')),
});
/** Every payment event (DESIGN D16): the payment, its subscription (after any transition the payment drove) and its subscriber (D10). */
const paymentData = z.object({
  payment: paymentObjectSchema,
  subscription: subscriptionObjectSchema.check(z.describe('The payment\u2019s subscription, after any transition the payment drove.')),
  subscriber: subscriberObjectSchema,
});
/** A refund: the payment data plus this refund's amount and reason. */
const paymentRefundData = z.extend(paymentData, { refund: PaymentRefund.check(z.describe('This refund (the payment\u2019s amount_refunded holds every refund so far).')) });
const memberData = z.object({
  member: memberObjectSchema,
  subscriber: z.nullable(subscriberObjectSchema).check(z.describe('The member\u2019s linked subscriber, or null for a free member.')),
});
const memberUnbanData = z.object({
  member: z.nullable(memberObjectSchema).check(z.describe('The member (now `left`), or null when the subscriber was banned before ever joining the community.')),
  subscriber: subscriberObjectSchema.check(z.describe('The subscriber, active again.')),
});
const memberRemovalData = z.object({
  member: z.nullable(memberObjectSchema).check(z.describe('The member, or null when the subscriber never joined the community.')),
  subscriber: z.nullable(subscriberObjectSchema).check(z.describe('The banned or kicked subscriber, or null for a free member.')),
  reason: z.nullable(z.string()),
});
const memberAccessData = z.object({
  member: z.nullable(memberObjectSchema).check(z.describe('The subscriber\u2019s member, or null when they have not joined the community.')),
  subscriber: subscriberObjectSchema,
  resource: projectResourceObjectSchema,
  invite_link: z.optional(z.nullable(MemberInviteLink)).check(z.describe('access_granted on Telegram: the subscriber\u2019s personal single-use invite link to the resource, or null when none was made (no bot, the platform refused).')),
});
const teamData = z.object({ team: Team });
const teamMemberData = z.object({ team: Team, team_member: TeamMember });
const roleData = z.object({ role: Role });
const groupData = z.object({ group: Group });
const billingData = z.object({ billing_account: billingAccountObjectSchema });
const billingInvoiceData = z.object({ billing_account: billingAccountObjectSchema, invoice: billingInvoiceObjectSchema });

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

/** The family of an event name: the part before the first dot. */
type FamilyOf<N extends string> = N extends `${infer F}.${string}` ? F : never;

/** One webhook event kind of the catalogue. */
export interface WebhookEventDefinition<N extends string = string> {
  /** Canonical name `<family>.<event>`, equal to the envelope `type` and the `SVC-Event-Name` header. */
  readonly name: N;
  /** The family (the part before the dot), e.g. `subscription`. */
  readonly family: FamilyOf<N>;
  /** What happened. */
  readonly description: string;
  /** The ability the endpoint owner must hold for a delivery to be created (interface "Subscribing"). */
  readonly minimum_ability: Ability;
  /** False when the envelope `project_id` is null (team-scoped, billing and test events). */
  readonly project_scoped: boolean;
  /** The zod schema of the envelope `data` object. */
  readonly data_schema: z.ZodMiniObject;
}

function event<const N extends string>(
  name: N,
  minimum_ability: Ability,
  project_scoped: boolean,
  data_schema: z.ZodMiniObject,
  description: string,
): WebhookEventDefinition<N> {
  const family = name.slice(0, name.indexOf('.')) as FamilyOf<N>;
  return { name, family, description, minimum_ability, project_scoped, data_schema };
}

const EVENTS = [
  // project.* (12): lifecycle, bot connection, resource link and unlink
  event('project.created', 'project:view', true, projectData, 'A project was created.'),
  event('project.updated', 'project:view', true, projectData, 'A project\u2019s name, description or settings changed.'),
  event('project.archived', 'project:view', true, projectData, 'A project was archived.'),
  event('project.unarchived', 'project:view', true, projectData, 'An archived project was restored.'),
  event('project.deleted', 'project:view', true, projectData, 'A project was deleted.'),
  event('project.bot_connected', 'project:view', true, projectBotData, 'A community bot was connected to the project.'),
  event('project.bot_disconnected', 'project:view', true, projectBotData, 'The project\u2019s community bot was disconnected or lost access.'),
  event('project.bot_permissions_changed', 'project:view', true, projectBotData, 'The permissions of the project\u2019s bot on the platform changed.'),
  event('project.resource_linked', 'project:view', true, projectResourceData, 'A platform resource (channel, group, server, role…) was linked to the project.'),
  event('project.resource_unlinked', 'project:view', true, projectResourceData, 'A platform resource was unlinked from the project.'),
  event('project.payment_provider_connected', 'project:view', true, projectProviderData, 'A payment provider was connected to the project.'),
  event('project.payment_provider_disconnected', 'project:view', true, projectProviderData, 'A payment provider was disconnected from the project.'),

  // plan.* (6): creation, update, activation, sync to the payment-provider catalogue
  event('plan.created', 'project-subscription-plan:view', true, planData, 'A subscription plan was created.'),
  event('plan.updated', 'project-subscription-plan:view', true, planData, 'A subscription plan\u2019s name, description, price or trial changed.'),
  event('plan.activated', 'project-subscription-plan:view', true, planData, 'A plan was activated and is open to new subscriptions.'),
  event('plan.deactivated', 'project-subscription-plan:view', true, planData, 'A plan was deactivated and is closed to new subscriptions.'),
  event('plan.synced', 'project-subscription-plan:view', true,
    z.object({
      plan: planObjectSchema,
      payment_provider: z.enum(PAYMENT_PROVIDER_VALUES),
      provider_product_id: z.string().check(z.describe('The product id in the provider\u2019s catalogue.')),
      provider_price_id: z.nullable(z.string()).check(z.describe('The price id in the provider\u2019s catalogue.')),
    }),
    'A plan was synced to a payment provider\u2019s catalogue.'),
  event('plan.sync_failed', 'project-subscription-plan:view', true,
    z.object({
      plan: planObjectSchema,
      payment_provider: z.enum(PAYMENT_PROVIDER_VALUES),
      reason: z.string().check(z.describe('Why it failed (the provider\u2019s message; never a credential).')),
      code: z.nullable(z.string()).check(z.describe('The provider\u2019s error code (Stripe\u2019s `code`, e.g. `resource_missing`), or null when it gave none.')),
    }),
    'Syncing a plan to a payment provider\u2019s catalogue failed.'),

  // subscription.* (14): every transition across the 13 statuses, plus upgrade and downgrade
  event('subscription.created', 'project-subscription:view', true, subscriptionTransitionData,
    'A subscription was created (status pending, incomplete, scheduled, trialing or active).'),
  event('subscription.activated', 'project-subscription:view', true, subscriptionTransitionData,
    'A subscription became active (first payment confirmed, trial converted, scheduled start reached, cancellation withdrawn or overdue invoice paid).'),
  event('subscription.renewed', 'project-subscription:view', true, subscriptionTransitionData,
    'An active subscription was renewed for a new period.'),
  event('subscription.cancellation_scheduled', 'project-subscription:view', true, subscriptionTransitionData,
    'A subscription will cancel at the end of the current period (status pending_cancellation).'),
  event('subscription.past_due', 'project-subscription:view', true, subscriptionTransitionData,
    'A renewal payment failed; the subscription is past_due while the provider retries.'),
  event('subscription.unpaid', 'project-subscription:view', true, subscriptionTransitionData,
    'Renewal retries are exhausted; the subscription is unpaid and access is withheld.'),
  event('subscription.paused', 'project-subscription:view', true, subscriptionTransitionData, 'A subscription was paused.'),
  event('subscription.resumed', 'project-subscription:view', true, subscriptionTransitionData,
    'A paused or suspended subscription became active again.'),
  event('subscription.suspended', 'project-subscription:view', true, subscriptionTransitionData,
    'A subscription was suspended by the creator (e.g. the subscriber was banned).'),
  event('subscription.canceled', 'project-subscription:view', true, subscriptionTransitionData, 'A subscription ended by cancellation.'),
  event('subscription.expired', 'project-subscription:view', true, subscriptionTransitionData,
    'A fixed-term subscription (e.g. from an access code) reached its end.'),
  event('subscription.incomplete_expired', 'project-subscription:view', true, subscriptionTransitionData,
    'The first payment of a subscription was never completed in time.'),
  event('subscription.upgraded', 'project-subscription:view', true, subscriptionPlanChangeData,
    'A subscription moved to a higher-priced plan.'),
  event('subscription.downgraded', 'project-subscription:view', true, subscriptionPlanChangeData,
    'A subscription moved to a lower-priced plan.'),

  // payment.* (4)
  event('payment.succeeded', 'project-payment:view', true, paymentData, 'A subscriber\u2019s payment succeeded.'),
  event('payment.failed', 'project-payment:view', true, paymentData, 'A subscriber\u2019s payment failed.'),
  event('payment.pending', 'project-payment:view', true, paymentData, 'A subscriber\u2019s payment was initiated and awaits confirmation.'),
  event('payment.refunded', 'project-payment:view', true, paymentRefundData, 'A payment was refunded in full or in part.'),

  // member.* (10): joined, converted, churned, banned, kicked and related community changes
  event('member.joined', 'project-user:view-any', true, memberData, 'A person joined the project\u2019s community.'),
  event('member.left', 'project-user:view-any', true, memberData, 'A member left the project\u2019s community of their own accord.'),
  event('member.updated', 'project-user:view-any', true, memberData, 'A member\u2019s display name or profile changed.'),
  event('member.converted', 'project-user:view-any', true,
    z.object({
      member: z.nullable(memberObjectSchema).check(z.describe('The subscriber\u2019s member, or null when they have not joined the community.')),
      subscriber: subscriberObjectSchema,
      subscription: subscriptionObjectSchema,
    }),
    'A free member became a paying subscriber.'),
  event('member.churned', 'project-user:view-any', true,
    z.object({
      member: z.nullable(memberObjectSchema).check(z.describe('The subscriber\u2019s member, or null when they have not joined the community.')),
      subscriber: subscriberObjectSchema,
      subscription: z.nullable(subscriptionObjectSchema),
    }),
    'A paying member has no live subscription any more.'),
  event('member.banned', 'project-user:view-any', true, memberRemovalData, 'A member was banned from the project\u2019s community.'),
  event('member.unbanned', 'project-user:view-any', true, memberUnbanData, 'A member\u2019s (or a subscriber\u2019s) ban was lifted.'),
  event('member.kicked', 'project-user:view-any', true, memberRemovalData, 'A member was removed from the project\u2019s community without a ban.'),
  event('member.access_granted', 'project-user:view-any', true, memberAccessData, 'A member was given access to a linked resource.'),
  event('member.access_revoked', 'project-user:view-any', true, memberAccessData, 'A member\u2019s access to a linked resource was removed.'),

  // access_code.* (3)
  event('access_code.batch_generated', 'project-access-code:view', true,
    z.object({ batch: accessCodeBatchObjectSchema }), 'A batch of access codes was generated.'),
  event('access_code.redeemed', 'project-access-code:view', true,
    z.object({
      access_code: accessCodeObjectSchema,
      subscriber: subscriberObjectSchema,
      subscription: z.nullable(subscriptionObjectSchema),
    }),
    'An access code was redeemed.'),
  event('access_code.expired', 'project-access-code:view', true,
    z.object({ access_code: accessCodeObjectSchema }), 'An access code expired unredeemed.'),

  // team.* (6): team create and delete, membership changes
  event('team.created', 'team:view', false, teamData, 'A team was created.'),
  event('team.deleted', 'team:view', false, teamData, 'A team was deleted.'),
  event('team.member_invited', 'team-member:view-any', false,
    teamMemberData, 'A person was invited to the team (the member is `invited`; never the invitation token).'),
  event('team.member_joined', 'team-member:view-any', false, teamMemberData, 'A person joined the team.'),
  event('team.member_removed', 'team-member:view-any', false, teamMemberData, 'A member left or was removed from the team.'),
  event('team.member_role_changed', 'team-member:view-any', false,
    z.object({
      team: Team,
      team_member: TeamMember,
      previous_role_ids: z.array(id()).check(z.describe('The roles the member held directly before the change.')),
      previous_group_ids: z.array(id()).check(z.describe('The groups the member was in before the change.')),
    }),
    'A team member\u2019s roles or groups changed.'),

  // role.* (3)
  event('role.created', 'role:view', false, roleData, 'A role was created.'),
  event('role.updated', 'role:view', false, roleData, 'A role\u2019s name, description, abilities or project scope changed.'),
  event('role.deleted', 'role:view', false, roleData, 'A role was deleted.'),

  // group.* (3)
  event('group.created', 'group:view', false, groupData, 'A group was created.'),
  event('group.updated', 'group:view', false, groupData, 'A group\u2019s name, description, roles or members changed.'),
  event('group.deleted', 'group:view', false, groupData, 'A group was deleted.'),

  // billing.* (9): the creator's own tier
  event('billing.invoice_created', 'billing-invoice:view', false, billingInvoiceData, 'An invoice for the team\u2019s own tier was issued.'),
  event('billing.invoice_paid', 'billing-invoice:view', false, billingInvoiceData, 'An invoice for the team\u2019s own tier was paid.'),
  event('billing.payment_failed', 'billing:view', false,
    z.object({
      billing_account: billingAccountObjectSchema,
      invoice: billingInvoiceObjectSchema,
      attempt_count: z.number().check(z.int(), z.positive(), z.describe('Failed payment attempts of this invoice so far.')),
      next_attempt_at: z.nullable(timestamp()).check(z.describe('When payment is tried again automatically; null when the operator records attempts.')),
    }),
    'Paying the team\u2019s own invoice failed.'),
  event('billing.tier_changed', 'billing:view', false,
    z.object({ billing_account: billingAccountObjectSchema, previous_tier: z.enum(BILLING_TIERS) }),
    'The team\u2019s own tier changed.'),
  event('billing.grace_period_started', 'billing:view', false,
    z.object({ billing_account: billingAccountObjectSchema, grace_period_ends_at: timestamp() }),
    'An unpaid invoice started a grace period; the team keeps full access until it ends.'),
  event('billing.grace_period_ended', 'billing:view', false,
    z.object({ billing_account: billingAccountObjectSchema, outcome: z.enum(['recovered', 'locked']) }),
    'The grace period ended, by payment or by lockdown.'),
  event('billing.lockdown_started', 'billing:view', false,
    z.object({ billing_account: billingAccountObjectSchema, reason: z.string() }),
    'The team was locked down for non-payment; writes are blocked until the balance is paid.'),
  event('billing.lockdown_lifted', 'billing:view', false, billingData, 'The team\u2019s lockdown was lifted.'),
  event('billing.usage_limit_reached', 'billing:view', false,
    z.object({
      billing_account: billingAccountObjectSchema,
      metric: z.enum(USAGE_METRICS),
      usage: z.number().check(z.int(), z.nonnegative(), z.describe('The count when the limit refused a create.')),
      limit: z.number().check(z.int(), z.nonnegative()),
    }),
    'The team reached a usage limit of its tier.'),

  // webhook_endpoint.* (1): the 71st event (DESIGN D6)
  event('webhook_endpoint.test', 'webhook-endpoint:manage', false,
    z.object({ webhook_endpoint_id: z.uuid(), message: z.string() }),
    'A test event, sent by "send test event" on an endpoint to that endpoint only.'),
] as const;

/** Union of every event name, e.g. `'subscription.created'`. */
export type WebhookEventName = (typeof EVENTS)[number]['name'];

/** Union of every event family, e.g. `'subscription'`. */
export type WebhookEventFamily = (typeof EVENTS)[number]['family'];

/**
 * Every webhook event: `{ name, family, description, minimum_ability, project_scoped, data_schema }`.
 * Exactly 71 entries (interface "Events → Families"; DESIGN D6).
 */
export const WEBHOOK_EVENTS: readonly WebhookEventDefinition<WebhookEventName>[] = EVENTS;

/** Every event name, in catalogue order (a tuple usable with `z.enum`). */
export const WEBHOOK_EVENT_NAMES = EVENTS.map((definition) => definition.name) as unknown as readonly [
  WebhookEventName,
  ...WebhookEventName[],
];

/** Event count per family (interface "Events → Families", plus `webhook_endpoint` for the 71st event). */
export const WEBHOOK_EVENT_FAMILIES = {
  project: 12,
  plan: 6,
  subscription: 14,
  payment: 4,
  member: 10,
  access_code: 3,
  team: 6,
  role: 3,
  group: 3,
  billing: 9,
  webhook_endpoint: 1,
} as const satisfies Record<WebhookEventFamily, number>;

const EVENTS_BY_NAME: ReadonlyMap<string, WebhookEventDefinition<WebhookEventName>> = new Map(
  WEBHOOK_EVENTS.map((definition) => [definition.name, definition]),
);

/** True when `value` is an event name of the catalogue. */
export function isWebhookEventName(value: string): value is WebhookEventName {
  return EVENTS_BY_NAME.has(value);
}

/** The catalogue entry of an event; throws for a name outside the catalogue. */
export function webhookEvent(name: WebhookEventName): WebhookEventDefinition<WebhookEventName> {
  const found = EVENTS_BY_NAME.get(name);
  if (!found) throw new Error(`Unknown webhook event: ${name}`);
  return found;
}

/** The zod schema of an event's `data` object (interface "Envelope"). */
export function eventDataSchema(name: WebhookEventName): z.ZodMiniObject {
  return webhookEvent(name).data_schema;
}
