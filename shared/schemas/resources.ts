import { z } from 'zod';
import { ListQuery, Timestamp, Uuid, listOf } from './common.js';
import { CREATE_PROJECT_PLATFORM_TYPES, PLATFORM_TYPES } from '../catalogues/platform-types.js';
import { WEBHOOK_EVENT_NAMES } from '../catalogues/webhook-events.js';
import { ABILITY_VALUES } from '../catalogues/abilities.js';

/** A team, as `GET /v1/teams/current` returns it. */
export const Team = z
  .object({ id: Uuid, name: z.string(), created_at: Timestamp })
  .meta({ id: 'Team' });

/** A creator's project (one community on one platform). */
export const Project = z
  .object({
    id: Uuid,
    name: z.string(),
    platform_type: z.enum(PLATFORM_TYPES.map((platform) => platform.value) as [string, ...string[]]),
    description: z.string().nullable(),
    status: z.enum(['active', 'archived']),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Project' });

/** Body of `POST /v1/projects` and input of the `create_project` tool. */
export const CreateProjectRequest = z
  .object({
    name: z.string().trim().min(1).max(100).describe('Display name, 1–100 characters.'),
    platform_type: z.enum(CREATE_PROJECT_PLATFORM_TYPES).describe('Platform the project runs on.'),
    description: z.string().max(1000).optional().describe('Up to 1000 characters.'),
  })
  .strict()
  .meta({ id: 'CreateProjectRequest' });

const HttpsUrl = z
  .url({ protocol: /^https$/, hostname: z.regexes.hostname })
  .max(2048)
  .describe('HTTPS URL of the receiver; http:// is rejected.');
const IpAddressOrRange = z
  .union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()])
  .describe('An IP address (or CIDR range) delivery may go to.');
const EventName = z.enum(WEBHOOK_EVENT_NAMES as unknown as [string, ...string[]]);

/** A webhook endpoint as reads return it (never with its secret; interface "Webhook endpoint"). */
export const WebhookEndpoint = z
  .object({
    id: Uuid,
    name: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    allowed_ips: z.array(z.string()).nullable(),
    is_active: z.boolean(),
    disabled_at: Timestamp.nullable(),
    consecutive_failures: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });

/** The endpoint plus its signing secret: returned once, by creation and by rotation. */
export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().describe('Signing secret (`whsec_...`). Shown only in this response.'),
}).meta({ id: 'WebhookEndpointWithSecret' });

/** Body of `POST /v1/webhook-endpoints`. */
export const CreateWebhookEndpointRequest = z
  .object({
    name: z.string().trim().min(1).max(100),
    url: HttpsUrl,
    events: z.array(EventName).min(1).max(71),
    allowed_ips: z.array(IpAddressOrRange).min(1).max(50).optional(),
  })
  .strict()
  .meta({ id: 'CreateWebhookEndpointRequest' });

/** Body of `POST /v1/webhook-endpoints/{id}` (every field optional; `is_active: true` re-enables). */
export const UpdateWebhookEndpointRequest = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    url: HttpsUrl.optional(),
    events: z.array(EventName).min(1).max(71).optional(),
    allowed_ips: z.array(IpAddressOrRange).min(1).max(50).nullable().optional(),
    is_active: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'UpdateWebhookEndpointRequest' });

/** One recorded delivery attempt (DESIGN D7). */
export const DeliveryAttempt = z
  .object({
    attempt: z.number().int(),
    attempted_at: Timestamp,
    status: z.number().int().nullable().describe('HTTP status, or null when no response came.'),
    failure_kind: z.enum(['http_status', 'timeout', 'tls', 'dns', 'connect', 'ip_not_allowed', 'private_address', 'invalid_url', 'endpoint_disabled']).nullable(),
    duration_ms: z.number().int(),
    response_body: z.string().describe('First 1 KiB of the response body.'),
  })
  .meta({ id: 'DeliveryAttempt' });

/** A webhook delivery of one event to one endpoint (interface "Webhook delivery", DESIGN D7). */
export const WebhookDelivery = z
  .object({
    id: z.string().describe('`dlv_` + ULID'),
    endpoint_id: Uuid,
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(['pending', 'delivering', 'succeeded', 'dead']),
    attempts: z.number().int().max(8),
    next_attempt_at: Timestamp.nullable(),
    last_attempt_at: Timestamp.nullable(),
    dead_lettered_at: Timestamp.nullable(),
    created_at: Timestamp,
    attempt_log: z.array(DeliveryAttempt).optional(),
  })
  .meta({ id: 'WebhookDelivery' });

/** An activity-log entry; `token_id` identifies the invoking token (interface "Tool-server authorization"). */
export const ActivityEntry = z
  .object({
    id: z.string(),
    occurred_at: Timestamp,
    token_id: z.string().nullable(),
    surface: z.enum(['rest', 'mcp']),
    operation: z.string().describe('REST operation id or tool name.'),
    outcome: z.string().describe('`ok` or an error code.'),
    status: z.number().int(),
    duration_ms: z.number().int(),
    request_id: z.string(),
  })
  .meta({ id: 'ActivityEntry' });

/** Query of `GET /v1/activity`. */
export const ActivityQuery = ListQuery.extend({
  token_id: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'Expected a token id (a ULID).').optional().describe('Only entries of this token.'),
  operation: z.string().min(1).max(200).optional().describe('Only entries of this operation (a REST operation id such as createProject, or a tool name).'),
}).strict();

/** An API token as lists return it (never its secret). */
export const Token = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    abilities: z.array(z.string()),
    scopes: z.array(z.string()),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable(),
  })
  .meta({ id: 'Token' });

/** The minted token, with the bearer string shown once. */
export const TokenWithSecret = Token.extend({
  token: z.string().describe('`svc_live_<id>_<secret>`. Shown only in this response.'),
}).meta({ id: 'TokenWithSecret' });

/** Body of `POST /v1/tokens`. */
export const CreateTokenRequest = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    abilities: z.array(z.enum(ABILITY_VALUES as unknown as [string, ...string[]])).min(1).max(65),
    project_ids: z.array(Uuid).max(20).optional().describe('Narrow the token to these projects.'),
  })
  .strict()
  .meta({ id: 'CreateTokenRequest' });

/** Body of `POST /v1/webhook-deliveries/replay-dead`. */
export const ReplayDeadRequest = z
  .object({ since_hours: z.number().int().min(1).max(720).describe('Hours back from now, applied to dead_lettered_at.') })
  .strict()
  .meta({ id: 'ReplayDeadRequest' });

export const ProjectList = listOf(Project, 'ProjectList');
export const WebhookEndpointList = listOf(WebhookEndpoint, 'WebhookEndpointList');
export const WebhookDeliveryList = listOf(WebhookDelivery, 'WebhookDeliveryList');
export const ActivityList = listOf(ActivityEntry, 'ActivityList');
export const TokenList = listOf(Token, 'TokenList');
