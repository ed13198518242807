import * as z from '../../schemas/zod.js';
import { WEBHOOK_EVENT_NAMES } from '../../catalogues/webhook-events.js';
import { booleanFilter, listOf, ListQuery, NameText, Timestamp, Uuid } from '../../schemas/common.js';
import { DEFAULT_MAX_CONCURRENCY, MAX_CONCURRENCY_LIMIT } from './policy.js';

/**
 * The webhook endpoint's shapes (interface "Webhook endpoint", DESIGN D8, D12): what reads return,
 * what creation and rotation return once (with the secret), and the requests. The REST body and the
 * tool arguments are the same schemas (DESIGN D13).
 */

/** Most entries `allowed_ips` may hold. */
const MAX_ALLOWED_IPS = 50;

/** A delivery URL: `https://` only, at most 2048 characters (DESIGN D8: anything else is VALIDATION_FAILED). */
const HttpsUrl = z.url({ protocol: /^https$/, hostname: z.regexes.hostname }).check(z.maxLength(2048));

/** One entry of `allowed_ips`: an IPv4 or IPv6 address, or a CIDR range (DESIGN D9). */
const IpAddressOrRange = z
  .union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()])
  .check(z.describe('An IPv4 or IPv6 address, or a CIDR range.'));

/**
 * Attempts in flight at once to one endpoint (DESIGN D24): 1 to {@link MAX_CONCURRENCY_LIMIT}, default {@link
 * DEFAULT_MAX_CONCURRENCY}.
 */
const MaxConcurrency = z
  .number()
  .check(
    z.int(),
    z.gte(1),
    z.lte(MAX_CONCURRENCY_LIMIT),
    z.describe(
      `Most delivery attempts in flight at once to this endpoint, 1 to ${MAX_CONCURRENCY_LIMIT} (default ${DEFAULT_MAX_CONCURRENCY}); more wait briefly and are not counted as attempts.`,
    ),
  );

/** A webhook event name of the catalogue (`service://enums/webhook-event`). */
const EventName = z.enum(WEBHOOK_EVENT_NAMES);

/** A webhook endpoint as reads return it: never with a secret (interface "Webhook endpoint", DESIGN D8). */
export const WebhookEndpoint = z
  .object({
    id: Uuid,
    name: z.string(),
    url: z.string(),
    events: z.array(EventName),
    allowed_ips: z.nullable(z.array(z.string())),
    is_active: z.boolean(),
    disabled_at: z.nullable(Timestamp),
    consecutive_failures: z.number().check(z.int()),
    max_concurrency: MaxConcurrency,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'WebhookEndpoint' });
/** A webhook endpoint (see {@link WebhookEndpoint}). */
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

/** The endpoint plus its signing secret: returned once, by creation and by rotation (DESIGN D8). */
export const WebhookEndpointWithSecret = z
  .extend(WebhookEndpoint, {
    secret: z.string().check(z.describe('Signing secret (`whsec_...`). Shown only in this response.')),
  })
  .register(z.globalRegistry, { id: 'WebhookEndpointWithSecret' });
/** An endpoint with its secret (see {@link WebhookEndpointWithSecret}). */
export type WebhookEndpointWithSecret = z.infer<typeof WebhookEndpointWithSecret>;

/** A page of webhook endpoints (DESIGN D12). */
export const WebhookEndpointList = listOf(WebhookEndpoint, 'WebhookEndpointList');

/** `{id}` path parameters of a webhook endpoint. */
export const WebhookEndpointIdParams = z.strictObject({ id: Uuid.check(z.describe('The webhook endpoint id.')) });

/** Body of `POST /v1/webhook-endpoints` (and the `create_webhook_endpoint` tool's arguments). */
export const CreateWebhookEndpointRequest = z
  .strictObject({
    name: NameText().check(z.describe('Endpoint name, 1 to 100 characters.')),
    url: HttpsUrl.check(z.describe('Delivery URL. Must be https://; http:// is rejected.')),
    events: z
      .array(EventName)
      .check(
        z.minLength(1),
        z.maxLength(WEBHOOK_EVENT_NAMES.length),
        z.describe('Event names to deliver (see service://enums/webhook-event); at least one.'),
      ),
    allowed_ips: z
      .optional(z.array(IpAddressOrRange).check(z.minLength(1), z.maxLength(MAX_ALLOWED_IPS)))
      .check(z.describe('Optional: deliver only when the URL\u2019s host resolves to one of these addresses.')),
    max_concurrency: z.optional(MaxConcurrency),
  })
  .register(z.globalRegistry, { id: 'CreateWebhookEndpointRequest' });
/** A validated creation request (see {@link CreateWebhookEndpointRequest}). */
export type CreateWebhookEndpointRequest = z.infer<typeof CreateWebhookEndpointRequest>;

/** Body of `POST /v1/webhook-endpoints/{id}` (every field optional; `is_active: true` re-enables). */
export const UpdateWebhookEndpointRequest = z
  .strictObject({
    name: z.optional(NameText()).check(z.describe('New name, 1 to 100 characters.')),
    url: z.optional(HttpsUrl).check(z.describe('New delivery URL. Must be https://.')),
    events: z
      .optional(z.array(EventName).check(z.minLength(1), z.maxLength(WEBHOOK_EVENT_NAMES.length)))
      .check(z.describe('New event list; at least one.')),
    allowed_ips: z
      .optional(z.nullable(z.array(IpAddressOrRange).check(z.minLength(1), z.maxLength(MAX_ALLOWED_IPS))))
      .check(z.describe('New allow-list; null removes it.')),
    is_active: z
      .optional(z.boolean())
      .check(z.describe('true re-enables the endpoint and resets consecutive_failures; false disables it.')),
    max_concurrency: z.optional(MaxConcurrency),
  })
  .register(z.globalRegistry, { id: 'UpdateWebhookEndpointRequest' });
/** A validated update request (see {@link UpdateWebhookEndpointRequest}). */
export type UpdateWebhookEndpointRequest = z.infer<typeof UpdateWebhookEndpointRequest>;

/** Query of `GET /v1/webhook-endpoints` (and the `list_webhook_endpoints` tool's arguments). */
export const ListWebhookEndpointsQuery = z.extend(ListQuery, {
  is_active: booleanFilter('Only active (true) or disabled (false) endpoints.'),
});
/** A validated list query (see {@link ListWebhookEndpointsQuery}). */
export type ListWebhookEndpointsQuery = z.infer<typeof ListWebhookEndpointsQuery>;
