/**
 * The tool-server tool catalogue: the 42 tools' names, titles, descriptions, required abilities,
 * annotations and zod input schemas. Metadata only: handlers are attached elsewhere.
 *
 * Source: interface "Endpoints → Tool server" (42 tools; named tools and their abilities),
 * "Tool-server authorization" (each tool checks its own ability); DESIGN D3 (`idempotency_key`
 * on write tools), D5 (each description names the ability), D8 (HTTPS webhook URLs), D12 (paging).
 */
import { z } from 'zod';
import type { Ability } from './abilities.js';
import { PAYMENT_PROVIDER_VALUES } from './payment-providers.js';
import { CREATE_PROJECT_PLATFORM_TYPES } from './platform-types.js';
import { SUBSCRIPTION_STATUS_VALUES } from './subscription-statuses.js';
import { WEBHOOK_EVENT_NAMES } from './webhook-events.js';

/** MCP tool annotations (hints for clients; `openWorldHint` is always false: the tools touch only this service). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

/** One tool of the catalogue. */
export interface ToolDefinition<N extends string = string> {
  /** snake_case tool name, e.g. `list_projects`. */
  readonly name: N;
  /** Human title. */
  readonly title: string;
  /** What the tool does; always ends with ``Requires ability `<ability>`.`` (DESIGN D5). */
  readonly description: string;
  /** The ability the calling token must hold, besides the `mcp:full` gate. */
  readonly ability: Ability;
  readonly annotations: ToolAnnotations;
  /** The zod (v4) schema of the arguments; strict, so unknown arguments are rejected. */
  readonly inputSchema: z.ZodObject;
}

// ---------------------------------------------------------------------------------------------
// Field schemas shared by several tools (exported so REST routes can reuse the same rules)
// ---------------------------------------------------------------------------------------------

/** `limit`: page size, 1–100 (default 25, DESIGN D12). */
export const limitField = () =>
  z.number().int().min(1).max(100).optional().describe('Page size, 1 to 100. Default 25.');

/** `cursor`: the `next_cursor` of the previous page. */
export const cursorField = () =>
  z.string().min(1).optional().describe('Opaque cursor: the `next_cursor` value of the previous page. Omit for the first page.');

/** `idempotency_key`: optional UUID with the `Idempotency-Key` header's rules (DESIGN D3). */
export const idempotencyKeyField = () =>
  z
    .uuid()
    .optional()
    .describe('Optional UUID, one per distinct write. Retrying with the same key and arguments returns the first result; the same key with other arguments fails with IDEMPOTENCY_KEY_REUSED.');

/** A webhook endpoint URL: HTTPS only (interface "Webhook endpoint"; DESIGN D8). */
export const webhookUrlField = () =>
  z.url({ protocol: /^https$/, error: 'The URL must use https://.' }).max(2048).describe('Delivery URL. Must be https://; http:// is rejected.');

/** An entry of `allowed_ips`: an IPv4 or IPv6 address, or a CIDR range. */
export const allowedIpField = () =>
  z.union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()]).describe('An IPv4 or IPv6 address, or a CIDR range.');

/** A webhook delivery id: `dlv_` + ULID (DESIGN D12). */
export const deliveryIdField = () =>
  z.string().regex(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/, 'Expected dlv_ followed by a ULID.');

/** A token id: a ULID (DESIGN D2). */
export const tokenIdField = () => z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'Expected a ULID.');

const uuid = (description: string) => z.uuid().describe(description);
const optionalUuid = (description: string) => z.uuid().optional().describe(description);
const projectFilter = () =>
  optionalUuid('Only objects of this project. Default: every project the token can see.');
const reason = () => z.string().max(500).optional().describe('Free-text reason, recorded in the activity log.');

// ---------------------------------------------------------------------------------------------
// Catalogue
// ---------------------------------------------------------------------------------------------

type Kind = 'read' | 'create' | 'update' | 'destructive';

const ANNOTATIONS: Record<Kind, ToolAnnotations> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  update: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};

function tool<const N extends string>(
  name: N,
  title: string,
  ability: Ability,
  kind: Kind,
  summary: string,
  shape: z.ZodRawShape,
): ToolDefinition<N> {
  return {
    name,
    title,
    description: `${summary} Requires ability \`${ability}\`.`,
    ability,
    annotations: { ...ANNOTATIONS[kind] },
    inputSchema: z.object(shape).strict(),
  };
}

const TOOLS = [
  // projects
  tool('list_projects', 'List projects', 'project:view-any', 'read',
    'List the team\u2019s projects, newest first.',
    { limit: limitField(), cursor: cursorField(), status: z.enum(['active', 'archived']).optional().describe('Only projects with this status.') }),
  tool('get_project', 'Get project', 'project:view', 'read',
    'Read one project.',
    { project_id: uuid('The project id.') }),
  tool('create_project', 'Create project', 'project:create', 'create',
    'Create a project on a community platform.',
    {
      name: z.string().trim().min(1).max(100).describe('Project name, 1 to 100 characters.'),
      platform_type: z.enum(CREATE_PROJECT_PLATFORM_TYPES).describe('The community platform (see service://enums/platform-type, create_project_accepts).'),
      description: z.string().max(1000).optional().describe('Optional description, up to 1000 characters.'),
      idempotency_key: idempotencyKeyField(),
    }),
  tool('update_project', 'Update project', 'project:update', 'update',
    'Change a project\u2019s name or description.',
    {
      project_id: uuid('The project id.'),
      name: z.string().trim().min(1).max(100).optional().describe('New name, 1 to 100 characters.'),
      description: z.string().max(1000).nullable().optional().describe('New description, up to 1000 characters; null clears it.'),
      idempotency_key: idempotencyKeyField(),
    }),

  // team
  tool('get_team', 'Get team', 'team:view', 'read',
    'Read the team the token is scoped to.',
    {}),
  tool('list_team_members', 'List team members', 'team-member:view-any', 'read',
    'List the members of the team.',
    { limit: limitField(), cursor: cursorField(), role_id: optionalUuid('Only members holding this role.') }),

  // subscribers
  tool('list_subscribers', 'List subscribers', 'project-user:view-any', 'read',
    'List subscribers (identifiers only, no contact details).',
    {
      limit: limitField(),
      cursor: cursorField(),
      project_id: projectFilter(),
      query: z.string().min(1).max(100).optional().describe('Only subscribers whose display name or platform user id contains this text.'),
    }),
  tool('get_subscriber', 'Get subscriber', 'project-user:view', 'read',
    'Read one subscriber, including e-mail and phone when the subscriber consented.',
    { id: uuid('The subscriber id.') }),
  tool('ban_subscriber', 'Ban subscriber', 'project-user:ban', 'destructive',
    'Ban a subscriber from the project\u2019s community and suspend their live subscriptions.',
    { id: uuid('The subscriber id.'), reason: reason(), idempotency_key: idempotencyKeyField() }),
  tool('kick_subscriber', 'Kick subscriber', 'project-user:kick', 'destructive',
    'Remove a subscriber from the project\u2019s community without banning them.',
    { id: uuid('The subscriber id.'), reason: reason(), idempotency_key: idempotencyKeyField() }),

  // plans
  tool('list_plans', 'List plans', 'project-subscription-plan:view-any', 'read',
    'List subscription plans.',
    {
      limit: limitField(),
      cursor: cursorField(),
      project_id: projectFilter(),
      is_active: z.boolean().optional().describe('Only active (true) or inactive (false) plans.'),
    }),
  tool('get_plan', 'Get plan', 'project-subscription-plan:view', 'read',
    'Read one subscription plan.',
    { id: uuid('The plan id.') }),
  tool('create_plan', 'Create plan', 'project-subscription-plan:create', 'create',
    'Create a subscription plan in a project.',
    {
      project_id: uuid('The project the plan belongs to.'),
      name: z.string().trim().min(1).max(100).describe('Plan name, 1 to 100 characters.'),
      description: z.string().max(1000).optional().describe('Optional description, up to 1000 characters.'),
      amount: z.number().int().min(0).max(100_000_000).describe('Price in the currency\u2019s minor unit (e.g. cents).'),
      currency: z.string().regex(/^[A-Z]{3}$/).describe('ISO 4217 currency code, upper case (e.g. USD).'),
      interval: z.enum(['day', 'week', 'month', 'year', 'one_time']).describe('Billing interval.'),
      interval_count: z.number().int().min(1).max(12).optional().describe('Intervals per billing period, 1 to 12. Default 1.'),
      trial_days: z.number().int().min(0).max(365).optional().describe('Free trial length in days, 0 to 365. Default 0.'),
      idempotency_key: idempotencyKeyField(),
    }),
  tool('update_plan', 'Update plan', 'project-subscription-plan:update', 'update',
    'Change a plan\u2019s name or description, or activate or deactivate it.',
    {
      id: uuid('The plan id.'),
      name: z.string().trim().min(1).max(100).optional().describe('New name, 1 to 100 characters.'),
      description: z.string().max(1000).nullable().optional().describe('New description; null clears it.'),
      is_active: z.boolean().optional().describe('true opens the plan to new subscriptions, false closes it.'),
      idempotency_key: idempotencyKeyField(),
    }),

  // subscriptions
  tool('list_subscriptions', 'List subscriptions', 'project-subscription:view-any', 'read',
    'List subscriptions.',
    {
      limit: limitField(),
      cursor: cursorField(),
      project_id: projectFilter(),
      plan_id: optionalUuid('Only subscriptions to this plan.'),
      subscriber_id: optionalUuid('Only subscriptions of this subscriber.'),
      status: z.enum(SUBSCRIPTION_STATUS_VALUES).optional().describe('Only subscriptions with this status (see service://enums/subscription-status).'),
    }),
  tool('get_subscription', 'Get subscription', 'project-subscription:view', 'read',
    'Read one subscription.',
    { id: uuid('The subscription id.') }),
  tool('cancel_subscription', 'Cancel subscription', 'project-subscription:cancel', 'destructive',
    'Cancel a subscription, at once or at the end of the current period.',
    {
      id: uuid('The subscription id.'),
      at_period_end: z.boolean().optional().describe('true (default) cancels at the end of the current period; false cancels at once.'),
      reason: reason(),
      idempotency_key: idempotencyKeyField(),
    }),
  tool('pause_subscription', 'Pause subscription', 'project-subscription:pause', 'update',
    'Pause a live subscription: no charges and no access until it is resumed.',
    { id: uuid('The subscription id.'), reason: reason(), idempotency_key: idempotencyKeyField() }),
  tool('resume_subscription', 'Resume subscription', 'project-subscription:pause', 'update',
    'Resume a paused subscription.',
    { id: uuid('The subscription id.'), idempotency_key: idempotencyKeyField() }),

  // access codes
  tool('list_access_codes', 'List access codes', 'project-access-code:view-any', 'read',
    'List access codes (the codes themselves are shown only at generation).',
    {
      limit: limitField(),
      cursor: cursorField(),
      project_id: projectFilter(),
      plan_id: optionalUuid('Only codes for this plan.'),
      status: z.enum(['active', 'redeemed', 'expired', 'revoked']).optional().describe('Only codes with this status.'),
    }),
  tool('generate_access_codes', 'Generate access codes', 'project-access-code:create', 'create',
    'Generate a batch of access codes for a plan; the codes are returned once.',
    {
      project_id: uuid('The project the codes belong to.'),
      plan_id: uuid('The plan a redeemed code subscribes to.'),
      count: z.number().int().min(1).max(1000).describe('Number of codes, 1 to 1000.'),
      duration_days: z.number().int().min(1).max(3650).optional().describe('Length of the subscription a code grants, in days. Default: the plan\u2019s interval.'),
      expires_at: z.iso.datetime().optional().describe('When unredeemed codes expire (ISO 8601 UTC). Default: never.'),
      idempotency_key: idempotencyKeyField(),
    }),
  tool('revoke_access_code', 'Revoke access code', 'project-access-code:revoke', 'destructive',
    'Revoke an unredeemed access code.',
    { id: uuid('The access code id.'), idempotency_key: idempotencyKeyField() }),

  // payments
  tool('list_payments', 'List payments', 'project-payment:view-any', 'read',
    'List subscriber payments (no payment credentials, no fee breakdown).',
    {
      limit: limitField(),
      cursor: cursorField(),
      project_id: projectFilter(),
      subscriber_id: optionalUuid('Only payments of this subscriber.'),
      provider: z.enum(PAYMENT_PROVIDER_VALUES).optional().describe('Only payments through this provider.'),
      status: z.enum(['pending', 'succeeded', 'failed', 'refunded']).optional().describe('Only payments with this status.'),
    }),
  tool('get_payment', 'Get payment', 'project-payment:view', 'read',
    'Read one payment (no payment credentials, no fee breakdown).',
    { id: uuid('The payment id.') }),
  tool('refund_payment', 'Refund payment', 'project-payment:refund', 'destructive',
    'Refund a succeeded payment in full or in part.',
    {
      id: uuid('The payment id.'),
      amount: z.number().int().min(1).optional().describe('Amount to refund in the minor unit. Default: the whole remaining amount.'),
      reason: reason(),
      idempotency_key: idempotencyKeyField(),
    }),

  // roles and groups
  tool('list_roles', 'List roles', 'role:view-any', 'read',
    'List the team\u2019s roles.',
    { limit: limitField(), cursor: cursorField() }),
  tool('get_role', 'Get role', 'role:view', 'read',
    'Read one role and its abilities.',
    { id: uuid('The role id.') }),
  tool('list_groups', 'List groups', 'group:view-any', 'read',
    'List the team\u2019s groups.',
    { limit: limitField(), cursor: cursorField() }),
  tool('get_group', 'Get group', 'group:view', 'read',
    'Read one group and its members.',
    { id: uuid('The group id.') }),

  // tokens and activity
  tool('list_tokens', 'List tokens', 'token:view-any', 'read',
    'List the team\u2019s API tokens with their abilities and scopes (never their secrets).',
    {
      limit: limitField(),
      cursor: cursorField(),
      include_revoked: z.boolean().optional().describe('Include revoked tokens. Default false.'),
    }),
  tool('get_activity_log', 'Get activity log', 'activity:read', 'read',
    'Read activity log entries, newest first; each names the invoking token.',
    {
      limit: limitField(),
      cursor: cursorField(),
      token_id: tokenIdField().optional().describe('Only entries of this token (a ULID).'),
      operation: z.string().min(1).max(200).optional().describe('Only entries of this operation (a tool name such as list_projects, or a REST operation).'),
    }),

  // webhook endpoints
  tool('list_webhook_endpoints', 'List webhook endpoints', 'webhook-endpoint:manage', 'read',
    'List webhook endpoints (never their secrets).',
    {
      limit: limitField(),
      cursor: cursorField(),
      is_active: z.boolean().optional().describe('Only active (true) or disabled (false) endpoints.'),
    }),
  tool('get_webhook_endpoint', 'Get webhook endpoint', 'webhook-endpoint:manage', 'read',
    'Read one webhook endpoint (never its secret).',
    { id: uuid('The webhook endpoint id.') }),
  tool('create_webhook_endpoint', 'Create webhook endpoint', 'webhook-endpoint:manage', 'create',
    'Register an HTTPS webhook endpoint; its signing secret is returned once.',
    {
      name: z.string().trim().min(1).max(100).describe('Endpoint name, 1 to 100 characters.'),
      url: webhookUrlField(),
      events: z.array(z.enum(WEBHOOK_EVENT_NAMES)).min(1).describe('Event names to deliver (see service://enums/webhook-event); at least one.'),
      allowed_ips: z.array(allowedIpField()).max(50).optional().describe('Optional: deliver only when the URL\u2019s host resolves to one of these addresses.'),
      idempotency_key: idempotencyKeyField(),
    }),
  tool('update_webhook_endpoint', 'Update webhook endpoint', 'webhook-endpoint:manage', 'update',
    'Change a webhook endpoint, or re-enable it (is_active true resets consecutive_failures).',
    {
      id: uuid('The webhook endpoint id.'),
      name: z.string().trim().min(1).max(100).optional().describe('New name, 1 to 100 characters.'),
      url: webhookUrlField().optional().describe('New delivery URL. Must be https://.'),
      events: z.array(z.enum(WEBHOOK_EVENT_NAMES)).min(1).optional().describe('New event list; at least one.'),
      allowed_ips: z.array(allowedIpField()).max(50).nullable().optional().describe('New allow-list; null removes it.'),
      is_active: z.boolean().optional().describe('true re-enables the endpoint and resets consecutive_failures; false disables it.'),
      idempotency_key: idempotencyKeyField(),
    }),
  tool('delete_webhook_endpoint', 'Delete webhook endpoint', 'webhook-endpoint:manage', 'destructive',
    'Delete a webhook endpoint; pending deliveries to it stop.',
    { id: uuid('The webhook endpoint id.'), idempotency_key: idempotencyKeyField() }),
  tool('rotate_webhook_endpoint_secret', 'Rotate webhook endpoint secret', 'webhook-endpoint:manage', 'destructive',
    'Replace an endpoint\u2019s signing secret at once (signatures use v1 only); the new secret is returned once.',
    { id: uuid('The webhook endpoint id.'), idempotency_key: idempotencyKeyField() }),
  tool('send_test_webhook_event', 'Send test webhook event', 'webhook-endpoint:manage', 'create',
    'Send a webhook_endpoint.test event to one endpoint.',
    { id: uuid('The webhook endpoint id.'), idempotency_key: idempotencyKeyField() }),

  // webhook deliveries
  tool('list_webhook_deliveries', 'List webhook deliveries', 'webhook-delivery:view-any', 'read',
    'List webhook deliveries, newest first.',
    {
      limit: limitField(),
      cursor: cursorField(),
      endpoint_id: optionalUuid('Only deliveries to this endpoint.'),
      status: z.enum(['pending', 'delivering', 'succeeded', 'dead']).optional().describe('Only deliveries with this status.'),
      event_name: z.enum(WEBHOOK_EVENT_NAMES).optional().describe('Only deliveries of this event.'),
    }),
  tool('get_webhook_delivery', 'Get webhook delivery', 'webhook-delivery:view-any', 'read',
    'Read one webhook delivery and its attempts.',
    { id: deliveryIdField().describe('The delivery id (dlv_ followed by a ULID).') }),
  tool('retry_webhook_delivery', 'Retry webhook delivery', 'webhook-delivery:retry', 'update',
    'Re-queue one dead delivery as pending with attempts reset to 0.',
    { id: deliveryIdField().describe('The delivery id (dlv_ followed by a ULID).'), idempotency_key: idempotencyKeyField() }),
  tool('replay_dead_webhook_deliveries', 'Replay dead webhook deliveries', 'webhook-delivery:retry', 'update',
    'Re-queue every dead delivery whose dead_lettered_at is within the last since_hours hours; returns the count.',
    {
      since_hours: z.number().int().min(1).max(720).describe('Hours back from now, 1 to 720, applied to dead_lettered_at.'),
      idempotency_key: idempotencyKeyField(),
    }),
] as const;

/** Union of every tool name, e.g. `'list_projects'`. */
export type ToolName = (typeof TOOLS)[number]['name'];

/**
 * Every tool of the tool server: `{ name, title, description, ability, annotations, inputSchema }`.
 * Exactly 42 entries (interface "Endpoints → Tool server").
 */
export const TOOL_DEFINITIONS: readonly ToolDefinition<ToolName>[] = TOOLS;

/** Every tool name, in catalogue order. */
export const TOOL_NAMES: readonly ToolName[] = TOOLS.map((definition) => definition.name);

/** The catalogue entry of a tool, or `undefined` for an unknown name. */
export function toolDefinition(name: string): ToolDefinition<ToolName> | undefined {
  return TOOL_DEFINITIONS.find((definition) => definition.name === name);
}
