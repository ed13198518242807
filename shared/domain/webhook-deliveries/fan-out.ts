import type { Principal } from '../../auth/principal.js';
import { webhookEvent } from '../../catalogues/webhook-events.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { envelopeOf, type StoredEvent } from '../../events/outbox.js';
import type { Runtime } from '../../runtime.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { deliveryStore } from '../../store/webhook-deliveries/deliveries.js';
import { currentOwnerAbilities } from '../webhook-endpoints/owners.js';
import type { StoredWebhookEndpoint } from '../webhook-endpoints/record.js';
import { allWebhookEndpoints, loadWebhookEndpoint } from '../webhook-endpoints/repository.js';
import type { EndpointSecrets } from '../webhook-endpoints/secrets.js';
import { newDeliveryItem } from './creation.js';
import { publicDelivery } from './reads.js';
import type { WebhookDelivery } from './schema.js';
import {
  EVENT_ID_HEADER,
  EVENT_NAME_HEADER,
  SIGNATURE_HEADER,
  STANDARD_WEBHOOK_HEADERS,
  signatureHeader,
  standardSignatureHeader,
} from './signing.js';
import { firstAttemptMessage } from './state-machine.js';
import { planMessages } from '../messages/lifecycle.js';

/**
 * Fan-out (DESIGN D6): from one stored event to its deliveries, and what each delivery sends — the
 * payload as the endpoint owner may see it (D10) and the signed request (interface "Webhook trust").
 */

/** `User-Agent` of every delivery POST (carries the API version, DESIGN D11). */
const USER_AGENT = 'MembershipService-Webhooks/2026-05-01';

/** The ability that lets an endpoint owner see subscriber e-mail and phone in payloads (DESIGN D10). */
const CONTACT_DETAILS_ABILITY = 'project-user:view';

/** Payload fields removed, at any depth, for an owner without {@link CONTACT_DETAILS_ABILITY}. */
const CONTACT_FIELDS: readonly string[] = ['email', 'phone'];

/** How a fan-out runs: `messages: false` makes no messages to subscribers (a seeded history; default true). */
export interface FanOutOptions {
  messages?: boolean;
}

/**
 * Fans one outbox event out (DESIGN D6): {@link fanOutEvents} of one event. Returns the number of
 * deliveries created, skipped ones included (0 when the event was already fanned out, is gone, or the
 * transaction was cancelled). Throws only on store or queue errors.
 */
export async function fanOutEvent(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  event: StoredEvent,
): Promise<number> {
  return fanOutEvents(runtime, [event]);
}

/**
 * Fans outbox events out (D6): a delivery per subscribed endpoint, created at or before the event, whose owner
 * (token that created it or last changed url/events) holds the event's ability now (`skipped` if disabled), written
 * with the event's mark (never twice), then attempt 1 queued. Returns deliveries made (skipped too); throws on
 * store/queue errors.
 */
export async function fanOutEvents(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  events: readonly StoredEvent[],
  options: FanOutOptions = {},
): Promise<number> {
  let created = 0;
  // Messages first (DESIGN D32): their occasion markers make a retry of this fan-out write none twice.
  if (options.messages !== false) await planMessages(runtime, events);
  // Team after team (a relay page or a commit holds few teams); route bundles that fan out one event stay free of
  // p-map.
  for (const [teamId, teamEvents] of Map.groupBy(events, (event) => event.team_id)) {
    const types = new Set(teamEvents.map((event) => event.type));
    const endpoints = (await allWebhookEndpoints(runtime, teamId)).filter((endpoint) =>
      endpoint.events.some((type) => types.has(type)),
    );
    // D6: the owners' abilities are re-read now, so a revoked or narrowed owner receives nothing it may no longer see.
    const owners = endpoints.length
      ? await currentOwnerAbilities(
          runtime.store,
          teamId,
          endpoints.map((endpoint) => endpoint.owner_token_id),
        )
      : new Map<string, ReadonlySet<string>>();
    const fanOuts = teamEvents.map((event) => {
      const minimumAbility = webhookEvent(event.type).minimum_ability;
      // An endpoint receives the events that happened once it existed, as Svix's and Stripe's do: an event fanned out
      // late (the relay or the stream behind) never reaches an endpoint made after it.
      const occurredMs = Date.parse(event.created_at);
      const receivers = endpoints.filter(
        (endpoint) =>
          endpoint.events.includes(event.type) &&
          Date.parse(endpoint.created_at) <= occurredMs &&
          owners.get(endpoint.owner_token_id)?.has(minimumAbility),
      );
      const deliveries = receivers.map((endpoint) =>
        newDeliveryItem(runtime.clock, teamId, endpoint.id, event, deliveryBody(endpoint.owner_abilities, event), {
          skipped: !endpoint.is_active,
        }),
      );
      return { event, deliveries };
    });
    const written = await deliveryStore.writeFanOuts(runtime.store, fanOuts, isoTime(runtime.clock.nowMs()));
    const made = fanOuts.filter((_, index) => written[index]).flatMap(({ deliveries }) => deliveries);
    created += made.length;
    const messages = made.filter((delivery) => delivery.status === 'pending').map(firstAttemptMessage);
    if (messages.length) await runtime.deliveryQueue.send(messages, 0);
  }
  return created;
}

/**
 * "Send test event" (DESIGN D6): writes a `webhook_endpoint.test` event (stored as already delivered,
 * outside the outbox) and its one delivery to this endpoint in one unit of work, whatever the endpoint
 * subscribes to, then queues attempt 1. Returns the delivery (pending, 0 attempts).
 * Errors: NOT_FOUND, CONFLICT (endpoint disabled).
 */
export async function sendTestEvent(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue' | 'eventsCommitted'>,
  principal: Principal,
  endpointId: string,
): Promise<WebhookDelivery> {
  const endpoint = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!endpoint) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
  if (!endpoint.is_active)
    throw new ProblemError('CONFLICT', 'The endpoint is disabled; re-enable it with is_active: true first.');
  const delivery = await unitOfWork(runtime, principal.teamId, (tx) => {
    const event = tx.emit({
      type: 'webhook_endpoint.test',
      projectId: null,
      data: { webhook_endpoint_id: endpointId, message: 'This is a test event sent from the membership service.' },
      deliveredDirectly: { deliveryCount: 1 },
    });
    const item = newDeliveryItem(
      runtime.clock,
      principal.teamId,
      endpointId,
      event,
      deliveryBody(endpoint.owner_abilities, event),
    );
    deliveryStore.insert(tx, item);
    return item;
  });
  await runtime.deliveryQueue.send([firstAttemptMessage(delivery)], 0);
  return publicDelivery(delivery, false);
}

/**
 * Removes subscriber `email` and `phone`, at any depth, from a payload unless the endpoint owner holds
 * `project-user:view` (interface "Data exposure", DESIGN D10; consent was applied when the event was
 * made). Returns a copy; `data` is not changed.
 */
export function redactPayload(data: unknown, ownerAbilities: readonly string[]): unknown {
  if (ownerAbilities.includes(CONTACT_DETAILS_ABILITY)) return data;
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value)
          .filter(([key]) => !CONTACT_FIELDS.includes(key))
          .map(([key, inner]) => [key, strip(inner)]),
      );
    }
    return value;
  };
  return strip(data);
}

/**
 * The exact body of one delivery POST (interface "Webhook trust", DESIGN D10): the envelope of `event`
 * as JSON, its payload redacted for an endpoint owner holding `ownerAbilities`. Fan-out stores it on
 * the delivery item (`body`), so the dispatcher signs and sends it without reading the event again.
 */
export function deliveryBody(ownerAbilities: readonly string[], event: StoredEvent): string {
  const envelope = envelopeOf(event);
  return JSON.stringify({ ...envelope, data: redactPayload(envelope.data, ownerAbilities) });
}

/**
 * The headers of one delivery POST of `body` at `nowMs` (epoch ms) (interface "Webhook trust", DESIGN
 * D8): signed with the endpoint's opened secret (`v1`) and, within a dashboard rotation's dual-signing window,
 * the previous one (`v0`); `SVC-Event-Id` and `SVC-Event-Name` are the envelope's `id` and `type`; and the
 * Standard Webhooks headers of D29 (`webhook-id`, `webhook-timestamp`, `webhook-signature`).
 */
export function signedDeliveryHeaders(
  endpoint: EndpointSecrets & Pick<StoredWebhookEndpoint, 'previous_secret_expires_at_ms'>,
  event: { id: string; type: string },
  body: string,
  nowMs: number,
): Record<string, string> {
  const dualSigning =
    endpoint.previous_secret &&
    endpoint.previous_secret_expires_at_ms &&
    endpoint.previous_secret_expires_at_ms > nowMs;
  const signing = {
    secret: endpoint.secret,
    previousSecret: dualSigning ? endpoint.previous_secret : null,
    timestampSeconds: Math.floor(nowMs / 1000),
    rawBody: body,
  };
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    [SIGNATURE_HEADER]: signatureHeader(signing),
    [STANDARD_WEBHOOK_HEADERS.id]: event.id,
    [STANDARD_WEBHOOK_HEADERS.timestamp]: String(signing.timestampSeconds),
    [STANDARD_WEBHOOK_HEADERS.signature]: standardSignatureHeader({ ...signing, id: event.id }),
    [EVENT_ID_HEADER]: event.id,
    [EVENT_NAME_HEADER]: event.type,
  };
}
