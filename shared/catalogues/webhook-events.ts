/**
 * Webhook event catalogue (interface "Events", "Subscribing", "Data exposure"; D6, D10, D12): kinds, minimum abilities,
 * `project_id` presence and `data` schemas from the modules' `webhook-events.ts`; served as
 * `service://enums/webhook-event` and `/webhook-events.json`. Parsing strips unknown keys, so no payload carries
 * payment credentials, fees, invitation tokens or passkey material; `email`/`phone` only with the owner's
 * `project-user:view` and consent.
 */
import type * as z from '../schemas/zod.js';
import type { Ability } from './abilities.js';
import type { FamilyOf } from '../domain/define-facts.js';
import { EVENTS_BY_MODULE } from '../domain/webhook-events.js';

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

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

const EVENTS = EVENTS_BY_MODULE.flat();

/** Union of every event name, e.g. `'subscription.created'`. */
export type WebhookEventName = (typeof EVENTS)[number]['name'];

/** Union of every event family, e.g. `'subscription'`. */
export type WebhookEventFamily = (typeof EVENTS)[number]['family'];

/** Every webhook event: `{ name, family, description, minimum_ability, project_scoped, data_schema }`. */
export const WEBHOOK_EVENTS: readonly WebhookEventDefinition<WebhookEventName>[] = EVENTS;

/** Every event name, in catalogue order (a tuple usable with `z.enum`). */
export const WEBHOOK_EVENT_NAMES = EVENTS.map((definition) => definition.name) as unknown as readonly [
  WebhookEventName,
  ...WebhookEventName[],
];

/** Event count per family, in catalogue order (interface "Events → Families", plus `webhook_endpoint`). */
export const WEBHOOK_EVENT_FAMILIES: Readonly<Record<WebhookEventFamily, number>> = EVENTS.reduce<
  Partial<Record<WebhookEventFamily, number>>
>((counts, definition) => ({ ...counts, [definition.family]: (counts[definition.family] ?? 0) + 1 }), {}) as Record<
  WebhookEventFamily,
  number
>;

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
