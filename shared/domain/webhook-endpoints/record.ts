import { isAbility } from '../../catalogues/abilities.js';
import { SealedSecret } from '../../credentials/envelope.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { parseItem, recordParser } from '../../store/records.js';
import type { Item, Key } from '../../store/requests.js';
import { WebhookEndpoint } from './schema.js';

/**
 * A webhook endpoint item as stored (`keys.webhookEndpoint`, DESIGN D6, D8, D14, D24): the public
 * fields (`allowed_ips`, `disabled_at`, `consecutive_failures` and `max_concurrency` tolerated absent:
 * read as null, null, 0 and the default cap by `publicEndpoint`) plus what delivery needs.
 */
const StoredWebhookEndpointRecord = z.extend(
  z.partial(WebhookEndpoint, {
    allowed_ips: true,
    disabled_at: true,
    consecutive_failures: true,
    max_concurrency: true,
  }),
  {
    team_id: z.string(),
    /**
     * The signing secret and, after a dashboard rotation, the previous one, sealed together (`secrets.ts`, D16): never
     * in clear in the item.
     */
    sealed_secrets: SealedSecret,
    /**
     * Epoch MILLISECONDS until which the previous secret also signs (`v0`); null when there is no dual-signing window.
     */
    previous_secret_expires_at_ms: z.nullable(z.number()),
    /** Token that created the endpoint, and its abilities at that time: the "endpoint owner" (D6, D10). */
    owner_token_id: z.string(),
    // An ability since dropped from the catalogue grants nothing: it is left out, never a parse error that would stop
    // deliveries.
    owner_abilities: z.pipe(
      z.array(z.string()),
      z.transform((abilities) => abilities.filter(isAbility)),
    ),
    /** The attempts in flight (D24): delivery id → epoch MILLISECONDS at which that slot's lease runs out. */
    in_flight: z.record(z.string(), z.number()),
    /**
     * Raised by every write that changes how a delivery is sent, so a dispatcher's cached copy is used only while
     * current.
     */
    revision: z.number().check(z.int(), z.nonnegative()),
  },
);

/**
 * The stored endpoint (see {@link StoredWebhookEndpointRecord}): public fields, team, sealed secrets, owner, slots and
 * revision.
 */
export type StoredWebhookEndpoint = z.output<typeof StoredWebhookEndpointRecord>;

/**
 * Parses an endpoint item (throws StoredRecordError naming its key and failing attribute paths, never a
 * value: the sealed secrets stay out of errors).
 */
export const parseStoredWebhookEndpoint = recordParser(entity.webhookEndpoint, StoredWebhookEndpointRecord);

/** What an attempt's failure count update returns (`UPDATED_NEW`): the endpoint's consecutive failures. */
const StoredFailureCount = z.object({ consecutive_failures: WebhookEndpoint.shape.consecutive_failures });

/**
 * The failure count an update of the endpoint at `key` returned (throws StoredRecordError naming that key when it does
 * not match).
 */
export function parseStoredFailureCount(attributes: Item, key: Key): number {
  return parseItem(
    entity.webhookEndpoint,
    StoredFailureCount,
    attributes,
    () => `${String(key.pk)} / ${String(key.sk)}`,
  ).consecutive_failures;
}
