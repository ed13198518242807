/**
 * The `service://enums/*` resources (envelope `{ version, count, items }`) and `GET /webhook-events.json`, generated
 * from the catalogues (interface "Tool-server resources", "Versioning"; D11).
 */
import * as z from '../schemas/zod.js';
import { ABILITIES } from './abilities.js';
import { ERROR_CODES } from './error-codes.js';
import { PAYMENT_PROVIDERS } from './payment-providers.js';
import { CREATE_PROJECT_PLATFORM_TYPES, PLATFORM_TYPES } from './platform-types.js';
import { SUBSCRIPTION_STATUSES } from './subscription-statuses.js';
import { API_VERSION } from './version.js';
import { WEBHOOK_EVENTS } from './webhook-events.js';

/** One item of a resource envelope: `value` and `category`, plus the catalogue's further fields. */
type EnumResourceItem = { value: string; category: string } & Record<string, unknown>;

/**
 * The body of an enum resource: `{ version, count, items }` (interface "Resource envelope").
 * The platform-type resource also carries `create_project_accepts` (the values `create_project` accepts).
 */
interface EnumResourceEnvelope {
  /** {@link API_VERSION}, the same stamp as the webhook `api_version`. */
  version: string;
  /** `items.length`. */
  count: number;
  items: EnumResourceItem[];
  /** Platform-type resource only: the platform types the `create_project` tool accepts. */
  create_project_accepts?: string[];
}

/** A read-only tool-server resource: its URI, names, description and a reader for its JSON body. */
export interface EnumResource {
  /** `service://enums/<name>`. */
  uri: string;
  /** Programmatic name, e.g. `ability`. */
  name: string;
  /** Human title. */
  title: string;
  description: string;
  /** MIME type of the body (always `application/json`). */
  mimeType: 'application/json';
  /** Builds the body. */
  read(): EnumResourceEnvelope;
}

function envelope(items: EnumResourceItem[]): EnumResourceEnvelope {
  return { version: API_VERSION, count: items.length, items };
}

/**
 * The `service://enums/*` resources, in the interface's order: ability, error-code,
 * payment-provider, platform-type, subscription-status, webhook-event.
 */
export const ENUM_RESOURCES: readonly EnumResource[] = [
  {
    uri: 'service://enums/ability',
    name: 'ability',
    title: 'Abilities',
    description: `The ability catalogue: ${ABILITIES.length} ability strings grouped by domain (category).`,
    mimeType: 'application/json',
    read: () => envelope(ABILITIES.map(({ value, category, description }) => ({ value, category, description }))),
  },
  {
    uri: 'service://enums/error-code',
    name: 'error-code',
    title: 'Error codes',
    description:
      'Every error code with its HTTP status, default message (title), remediation hint and docs_url anchor.',
    mimeType: 'application/json',
    read: () =>
      envelope(
        ERROR_CODES.map(({ code, category, status, title, hint, docs_url }) => ({
          value: code,
          category,
          status,
          title,
          hint,
          docs_url,
        })),
      ),
  },
  {
    uri: 'service://enums/payment-provider',
    name: 'payment-provider',
    title: 'Payment providers',
    description: 'Every supported payment provider, and whether a project can connect it now (connectable).',
    mimeType: 'application/json',
    read: () =>
      envelope(
        PAYMENT_PROVIDERS.map(({ value, category, label, connectable, description }) => ({
          value,
          category,
          label,
          connectable,
          description,
        })),
      ),
  },
  {
    uri: 'service://enums/platform-type',
    name: 'platform-type',
    title: 'Platform types',
    description:
      'Every platform type with the resource kinds its projects can link, whether a project can connect its bot now (connectable), plus the subset that the create_project tool accepts (create_project_accepts).',
    mimeType: 'application/json',
    read: () => ({
      ...envelope(
        PLATFORM_TYPES.map(
          ({ value, category, label, create_project_accepts, connectable, resource_kinds, description }) => ({
            value,
            category,
            label,
            create_project_accepts,
            connectable,
            resource_kinds: [...resource_kinds],
            description,
          }),
        ),
      ),
      create_project_accepts: [...CREATE_PROJECT_PLATFORM_TYPES],
    }),
  },
  {
    uri: 'service://enums/subscription-status',
    name: 'subscription-status',
    title: 'Subscription statuses',
    description: `The ${SUBSCRIPTION_STATUSES.length} canonical subscription statuses with a human label and a UI colour family.`,
    mimeType: 'application/json',
    read: () =>
      envelope(
        SUBSCRIPTION_STATUSES.map(({ value, category, label, color, description }) => ({
          value,
          category,
          label,
          color,
          description,
        })),
      ),
  },
  {
    uri: 'service://enums/webhook-event',
    name: 'webhook-event',
    title: 'Webhook events',
    description: `The ${WEBHOOK_EVENTS.length}-event webhook catalogue, with the minimum subscribing-creator ability for each event.`,
    mimeType: 'application/json',
    read: () =>
      envelope(
        WEBHOOK_EVENTS.map(({ name, family, minimum_ability, description, project_scoped }) => ({
          value: name,
          category: family,
          minimum_ability,
          description,
          project_scoped,
        })),
      ),
  },
];

/** The resource with this URI, or `undefined`. */
export function enumResource(uri: string): EnumResource | undefined {
  return ENUM_RESOURCES.find((resource) => resource.uri === uri);
}

/** One event of {@link WebhookEventsDocument}. */
interface WebhookEventsDocumentEvent {
  name: string;
  family: string;
  description: string;
  minimum_ability: string;
  project_scoped: boolean;
  /** JSON Schema (draft 2020-12) of the envelope `data` object. */
  data_schema: Record<string, unknown>;
}

/** The body of `GET /webhook-events.json`: `{ version, count, events }`. */
export interface WebhookEventsDocument {
  version: string;
  count: number;
  events: WebhookEventsDocumentEvent[];
}

let cachedDocument: WebhookEventsDocument | undefined;

/**
 * The body of `GET /webhook-events.json` (interface "Endpoints → REST"): every event with its
 * `data` JSON Schema, generated with `z.toJSONSchema` from the catalogue.
 * The schemas describe the input side, so they do not forbid fields added by later versions
 * (interface "Versioning": unknown fields are public-safe metadata).
 * Returns a fresh deep copy each call.
 */
export function webhookEventsDocument(): WebhookEventsDocument {
  cachedDocument ??= {
    version: API_VERSION,
    count: WEBHOOK_EVENTS.length,
    events: WEBHOOK_EVENTS.map(({ name, family, description, minimum_ability, project_scoped, data_schema }) => ({
      name,
      family,
      description,
      minimum_ability,
      project_scoped,
      data_schema: z.toJSONSchema(data_schema, { io: 'input' }),
    })),
  };
  return structuredClone(cachedDocument);
}
