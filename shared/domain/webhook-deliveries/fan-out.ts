import type { Principal } from '../../auth/principal.js';
import { webhookEvent } from '../../catalogues/webhook-events.js';
import { ProblemError } from '../../errors.js';
import { envelopeOf, type StoredEvent } from '../../events/outbox.js';
import type { Runtime } from '../../runtime.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { currentOwnerAbilities } from '../webhook-endpoints/owners.js';
import { allWebhookEndpoints, loadWebhookEndpoint, type StoredWebhookEndpoint } from '../webhook-endpoints/repository.js';
import { newDeliveryItem, publicDelivery, writeFanOut } from './repository.js';
import type { WebhookDelivery } from './schema.js';
import { EVENT_ID_HEADER, EVENT_NAME_HEADER, SIGNATURE_HEADER, signatureHeader } from './signing.js';
import { attemptMessage } from './state-machine.js';

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

/**
 * Fans one outbox event out (DESIGN D6): one delivery per endpoint of the team that subscribes to the
 * event and whose owner (the token that created it or last changed its url or events) holds the
 * event's minimum ability now (re-read: one BatchGetItem) — `pending` for an active endpoint, `skipped`
 * (no attempt, no counter change, replayable later) for a disabled one. The deliveries and the event's
 * "fanned out" mark are written in one transaction guarded on the mark, so a repeated stream record
 * or relay pass creates nothing twice. Then each delivery's attempt 1 is queued at once (a lost
 * queue send is picked up by the sweeper). Returns the number of deliveries created, skipped ones
 * included (0 when the event
 * was already fanned out, is gone, or the transaction was cancelled). Throws only on store or queue errors.
 */
export async function fanOutEvent(runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>, event: StoredEvent): Promise<number> {
  const minimumAbility = webhookEvent(event.type).minimum_ability;
  const subscribed = (await allWebhookEndpoints(runtime, event.team_id)).filter((endpoint) => endpoint.events.includes(event.type));
  // D6: the owners' abilities are re-read now, so a revoked or narrowed owner receives nothing it may no longer see.
  const owners = subscribed.length ? await currentOwnerAbilities(runtime.store, event.team_id, subscribed.map((endpoint) => endpoint.owner_token_id)) : new Map();
  const endpoints = subscribed.filter((endpoint) => owners.get(endpoint.owner_token_id)?.has(minimumAbility));
  const deliveries = endpoints.map((endpoint) => newDeliveryItem(runtime.clock, event.team_id, endpoint.id, event, { skipped: !endpoint.is_active }));
  if (!(await writeFanOut(runtime.store, event, deliveries, runtime.clock.nowMs()))) return 0; // already fanned out (or the event is gone)
  const pending = deliveries.filter((delivery) => delivery.status === 'pending');
  if (pending.length) {
    await runtime.deliveryQueue.send(
      pending.map((delivery) => attemptMessage(delivery, 1)),
      0,
    );
  }
  return deliveries.length;
}

/**
 * "Send test event" (DESIGN D6): writes a `webhook_endpoint.test` event (stored as already delivered,
 * outside the outbox) and its one delivery to this endpoint in one unit of work, whatever the endpoint
 * subscribes to, then queues attempt 1. Returns the delivery (pending, 0 attempts).
 * Errors: NOT_FOUND, CONFLICT (endpoint disabled).
 */
export async function sendTestEvent(runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue' | 'eventsCommitted'>, principal: Principal, endpointId: string): Promise<WebhookDelivery> {
  const endpoint = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!endpoint) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
  if (!endpoint.is_active) throw new ProblemError('CONFLICT', 'The endpoint is disabled; re-enable it with is_active: true first.');
  const delivery = await unitOfWork(runtime, principal.teamId, (tx) => {
    const event = tx.emit({
      type: 'webhook_endpoint.test',
      projectId: null,
      data: { webhook_endpoint_id: endpointId, message: 'This is a test event sent from the membership service.' },
      deliveredDirectly: { deliveryCount: 1 },
    });
    const item = newDeliveryItem(runtime.clock, principal.teamId, endpointId, event);
    tx.put(item, { condition: 'attribute_not_exists(pk)' });
    return item;
  });
  await runtime.deliveryQueue.send([attemptMessage(delivery, 1)], 0);
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
      return Object.fromEntries(Object.entries(value).filter(([key]) => !CONTACT_FIELDS.includes(key)).map(([key, inner]) => [key, strip(inner)]));
    }
    return value;
  };
  return strip(data);
}

/**
 * Builds the exact body and headers of one delivery POST at `nowMs` (epoch ms) (interface "Webhook
 * trust", DESIGN D8, D10): the envelope with the payload redacted for the endpoint owner, signed with
 * the endpoint secret (`v1`) and, within a dashboard rotation's dual-signing window, the previous one
 * (`v0`); `SVC-Event-Id` and `SVC-Event-Name` equal the envelope's `id` and `type`.
 */
export function buildDeliveryRequest(
  endpoint: Pick<StoredWebhookEndpoint, 'secret' | 'previous_secret' | 'previous_secret_expires_at_ms' | 'owner_abilities'>,
  event: StoredEvent,
  nowMs: number,
): { body: string; headers: Record<string, string> } {
  const envelope = envelopeOf(event);
  const body = JSON.stringify({ ...envelope, data: redactPayload(envelope.data, endpoint.owner_abilities) });
  const dualSigning = endpoint.previous_secret && endpoint.previous_secret_expires_at_ms && endpoint.previous_secret_expires_at_ms > nowMs;
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      [SIGNATURE_HEADER]: signatureHeader({
        secret: endpoint.secret,
        previousSecret: dualSigning ? endpoint.previous_secret : null,
        timestampSeconds: Math.floor(nowMs / 1000),
        rawBody: body,
      }),
      [EVENT_ID_HEADER]: event.id,
      [EVENT_NAME_HEADER]: event.type,
    },
  };
}
