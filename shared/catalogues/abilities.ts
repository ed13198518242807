/**
 * The ability catalogue: every ability a token (or a team role) can carry.
 *
 * Source: interface "Authentication → Bearer tokens" (65 abilities, grouped by domain) and
 * "Tool-server authorization" (`mcp:full` is a gate that grants no data); served as the
 * `service://enums/ability` resource.
 *
 * Naming: `<object>:<verb>`, where `view-any` lists objects and `view` reads one object
 * (for subscribers, `project-user:view` also unlocks contact details, interface "Data exposure").
 */

/** The domain an ability belongs to (the `category` field of the ability resource items). */
export type AbilityCategory =
  | 'project'
  | 'subscriber'
  | 'plan'
  | 'subscription'
  | 'access_code'
  | 'payment'
  | 'team'
  | 'role'
  | 'group'
  | 'token'
  | 'webhook'
  | 'activity'
  | 'billing'
  | 'mcp';

/**
 * Every ability, grouped by domain: `{ value, category, description }`.
 * Exactly 65 entries (interface "Limits → Catalogue sizes").
 */
export const ABILITIES = [
  // project (8)
  { value: 'project:view-any', category: 'project', description: 'List the projects of the team.' },
  { value: 'project:view', category: 'project', description: 'Read one project, its bot connection and linked resources.' },
  { value: 'project:create', category: 'project', description: 'Create a project.' },
  { value: 'project:update', category: 'project', description: 'Change a project\u2019s name, description and settings.' },
  { value: 'project:delete', category: 'project', description: 'Delete a project.' },
  { value: 'project:archive', category: 'project', description: 'Archive a project or restore an archived one.' },
  { value: 'project:connect-bot', category: 'project', description: 'Connect or disconnect a project\u2019s community bot.' },
  { value: 'project:link-resource', category: 'project', description: 'Link or unlink platform resources (channels, groups, servers) to a project.' },

  // subscriber (project-user) (6)
  { value: 'project-user:view-any', category: 'subscriber', description: 'List the subscribers of a project (identifiers only, no contact details).' },
  { value: 'project-user:view', category: 'subscriber', description: 'Read one subscriber, including e-mail and phone when the subscriber consented.' },
  { value: 'project-user:update', category: 'subscriber', description: 'Change a subscriber\u2019s display name, notes and tags.' },
  { value: 'project-user:ban', category: 'subscriber', description: 'Ban or unban a subscriber from a project\u2019s community.' },
  { value: 'project-user:kick', category: 'subscriber', description: 'Remove a subscriber from a project\u2019s community without banning them.' },
  { value: 'project-user:export', category: 'subscriber', description: 'Export the subscriber list of a project.' },

  // plan (project-subscription-plan) (6)
  { value: 'project-subscription-plan:view-any', category: 'plan', description: 'List the subscription plans of a project.' },
  { value: 'project-subscription-plan:view', category: 'plan', description: 'Read one subscription plan.' },
  { value: 'project-subscription-plan:create', category: 'plan', description: 'Create a subscription plan.' },
  { value: 'project-subscription-plan:update', category: 'plan', description: 'Change, activate or deactivate a subscription plan.' },
  { value: 'project-subscription-plan:delete', category: 'plan', description: 'Delete a subscription plan that has no subscriptions.' },
  { value: 'project-subscription-plan:sync', category: 'plan', description: 'Sync a plan to the payment-provider catalogue.' },

  // subscription (project-subscription) (6)
  { value: 'project-subscription:view-any', category: 'subscription', description: 'List the subscriptions of a project.' },
  { value: 'project-subscription:view', category: 'subscription', description: 'Read one subscription.' },
  { value: 'project-subscription:create', category: 'subscription', description: 'Grant a subscription to a subscriber manually.' },
  { value: 'project-subscription:update', category: 'subscription', description: 'Change a subscription\u2019s plan (upgrade or downgrade) or billing dates.' },
  { value: 'project-subscription:cancel', category: 'subscription', description: 'Cancel a subscription, at once or at the end of the period.' },
  { value: 'project-subscription:pause', category: 'subscription', description: 'Pause and resume a subscription.' },

  // access code (project-access-code) (4)
  { value: 'project-access-code:view-any', category: 'access_code', description: 'List the access codes of a project.' },
  { value: 'project-access-code:view', category: 'access_code', description: 'Read one access code and its redemption.' },
  { value: 'project-access-code:create', category: 'access_code', description: 'Generate a batch of access codes.' },
  { value: 'project-access-code:revoke', category: 'access_code', description: 'Revoke an unredeemed access code.' },

  // payment (project-payment) (3)
  { value: 'project-payment:view-any', category: 'payment', description: 'List the payments of a project (no payment credentials, no fee breakdown).' },
  { value: 'project-payment:view', category: 'payment', description: 'Read one payment (no payment credentials, no fee breakdown).' },
  { value: 'project-payment:refund', category: 'payment', description: 'Refund a payment in full or in part.' },

  // team and team-member (7)
  { value: 'team:view', category: 'team', description: 'Read the team the token is scoped to.' },
  { value: 'team:update', category: 'team', description: 'Change the team\u2019s name and settings.' },
  { value: 'team:delete', category: 'team', description: 'Delete the team.' },
  { value: 'team-member:view-any', category: 'team', description: 'List the members of the team.' },
  { value: 'team-member:invite', category: 'team', description: 'Invite a person to the team.' },
  { value: 'team-member:update', category: 'team', description: 'Change a team member\u2019s role.' },
  { value: 'team-member:remove', category: 'team', description: 'Remove a member from the team.' },

  // role (6)
  { value: 'role:view-any', category: 'role', description: 'List the roles of the team.' },
  { value: 'role:view', category: 'role', description: 'Read one role and its abilities.' },
  { value: 'role:create', category: 'role', description: 'Create a role (never with abilities the caller lacks).' },
  { value: 'role:update', category: 'role', description: 'Change a role\u2019s name and abilities (never beyond the caller\u2019s own).' },
  { value: 'role:delete', category: 'role', description: 'Delete a role that no member holds.' },
  { value: 'role:assign', category: 'role', description: 'Assign a role to a team member.' },

  // group (6)
  { value: 'group:view-any', category: 'group', description: 'List the groups of the team.' },
  { value: 'group:view', category: 'group', description: 'Read one group and its members.' },
  { value: 'group:create', category: 'group', description: 'Create a group.' },
  { value: 'group:update', category: 'group', description: 'Change a group\u2019s name and description.' },
  { value: 'group:delete', category: 'group', description: 'Delete a group.' },
  { value: 'group:manage-members', category: 'group', description: 'Add members to a group or remove them.' },

  // token (3)
  { value: 'token:view-any', category: 'token', description: 'List the API tokens of the team (never their secrets).' },
  { value: 'token:create', category: 'token', description: 'Mint an API token (never with abilities or scopes the caller lacks).' },
  { value: 'token:revoke', category: 'token', description: 'Revoke an API token; it fails on its next call.' },

  // webhook (3)
  { value: 'webhook-endpoint:manage', category: 'webhook', description: 'List, create, change, delete webhook endpoints, rotate their secrets and send test events.' },
  { value: 'webhook-delivery:view-any', category: 'webhook', description: 'List and read webhook deliveries and their attempts.' },
  { value: 'webhook-delivery:retry', category: 'webhook', description: 'Retry a dead delivery or replay dead deliveries in bulk.' },

  // activity (2)
  { value: 'activity:read', category: 'activity', description: 'Read the activity log, including every tool invocation and the token behind it.' },
  { value: 'activity:export', category: 'activity', description: 'Export the activity log.' },

  // billing: the creator's own tier (4)
  { value: 'billing:view', category: 'billing', description: 'Read the team\u2019s own tier, usage and billing status.' },
  { value: 'billing:update', category: 'billing', description: 'Change the team\u2019s tier and billing details.' },
  { value: 'billing-invoice:view-any', category: 'billing', description: 'List the team\u2019s own invoices.' },
  { value: 'billing-invoice:view', category: 'billing', description: 'Read one of the team\u2019s own invoices.' },

  // mcp (1)
  { value: 'mcp:full', category: 'mcp', description: 'Use the tool server. A gate only: it grants no data access; each tool checks its own ability.' },
] as const satisfies readonly { value: string; category: AbilityCategory; description: string }[];

/** One entry of {@link ABILITIES}. */
type AbilityDefinition = (typeof ABILITIES)[number];

/** Union of every ability string, e.g. `'project-user:view-any'`. */
export type Ability = AbilityDefinition['value'];

/** Every ability string, in catalogue order (a tuple usable with `z.enum`). */
export const ABILITY_VALUES = ABILITIES.map((ability) => ability.value) as unknown as readonly [
  Ability,
  ...Ability[],
];

const ABILITY_SET: ReadonlySet<string> = new Set<string>(ABILITY_VALUES);

/** True when `value` is an ability of the catalogue (interface "Bearer tokens"). */
export function isAbility(value: string): value is Ability {
  return ABILITY_SET.has(value);
}
